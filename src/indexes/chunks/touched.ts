// What a change of an index wrote and deleted, for reports that must name every object a deletion
// touched (Forget User: a person checking a deletion request needs the whole list).

export interface Touched {
	/** Objects deleted (segments replaced or emptied). */
	deleted: string[];
	/** Objects written anew without what was removed: manifests rewritten, segments that replace deleted ones. */
	rewritten: string[];
}
