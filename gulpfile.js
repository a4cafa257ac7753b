// Copies node and credential icons next to the compiled code (tsc does not copy SVGs).
const { src, dest, parallel } = require('gulp');

const nodeIcons = () => src('nodes/**/*.svg').pipe(dest('dist/nodes'));
const credentialIcons = () => src('credentials/**/*.svg').pipe(dest('dist/credentials'));

exports['build:icons'] = parallel(nodeIcons, credentialIcons);
