// Values the recall benchmark's facts and chat are made of (see recall-data.ts): names of places,
// employers, cars, pets, people and dates, and the codes an assistant confirms bookings with.

/** A list written as one line: items separated by "|". */
export const list = (items: string) => items.split('|');

export const CITIES = list(
	'Lyon|Oslo|Porto|Leeds|Denver|Austin|Munich|Utrecht|Valencia|Krakow|Dublin|Toronto|Melbourne|' +
		'Seattle|Edinburgh|Ghent|Bologna|Gothenburg|Tallinn|Montreal',
);
export const COMPANIES = list(
	'Northwind Logistics|Acme Health|Brightline Bank|Greenleaf Foods|Helix Robotics|' +
		'Summit Insurance|Bluewave Media|Orbit Telecom|Cedar Valley Hospital|Quarry Lane Retail',
);
export const JOBS = list(
	'nurse|data analyst|product manager|accountant|civil engineer|graphic designer|' +
		'secondary school teacher|software developer|pharmacist|sales manager|paramedic|architect',
);
export const CARS = list(
	'a 2014 Toyota Corolla|a Volkswagen Golf|a Ford Focus estate|a Honda Civic|a Mazda 3|' +
		'a Tesla Model 3|a Kia Niro hybrid|a Skoda Octavia|a Subaru Outback|a Renault Zoe',
);
export const PLANS = [
	['Lite', '5 GB', '€9'],
	['Smart', '20 GB', '€15'],
	['Plus', '50 GB', '€22'],
	['Max', '100 GB', '€35'],
	['Travel', '30 GB', '€25'],
];
export const RESTAURANTS = list(
	'Chez Marcel|Trattoria Sole|The Copper Pot|Sakura House|El Faro|Bistro Nord',
);
export const INSTRUMENTS = list('cello|trumpet|bass guitar|clarinet|drums|violin');
export const LANGUAGES = list('Portuguese|Japanese|Dutch|Korean|Italian|Polish');
export const DIETS = [
	'vegetarian',
	'vegan',
	'pescatarian',
	'gluten-free',
	'dairy-free',
	'low-carb',
];
export const BREEDS = [
	'beagle',
	'labrador',
	'border collie',
	'dachshund',
	'cocker spaniel',
	'greyhound',
];
export const NAMES = [
	'Pepper',
	'Biscuit',
	'Luna',
	'Milo',
	'Olive',
	'Scout',
	'Maple',
	'Juniper',
	'Ziggy',
];
export const CHILDREN = ['Emma', 'Noor', 'Lucia', 'Hana', 'Maya', 'Ines', 'Freya', 'Zoe', 'Amira'];
export const PARTNERS = ['Priya', 'Tomas', 'Daniel', 'Sofia', 'Kenji', 'Leila', 'Marco', 'Anna'];
export const MONTHS = ['March', 'April', 'May', 'June', 'July', 'September', 'October', 'November'];
export const DAY = ['3', '7', '9', '12', '14', '18', '21', '26', '28'];
export const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
export const letters = 'ABCDEFGHJKLMNPQRSTUVWXYZ';
export const digits = '0123456789';

export function code(pick: <T>(xs: readonly T[]) => T, pattern: string): string {
	return [...pattern]
		.map((c) => (c === 'A' ? pick([...letters]) : c === '9' ? pick([...digits]) : c))
		.join('');
}

export const date = (pick: <T>(xs: readonly T[]) => T) => `${pick(MONTHS)} ${pick(DAY)}`;
export const two = <T>(pick: (xs: readonly T[]) => T, xs: readonly T[]): [T, T] => {
	const a = pick(xs);
	return [a, pick(xs.filter((x) => x !== a))];
};
