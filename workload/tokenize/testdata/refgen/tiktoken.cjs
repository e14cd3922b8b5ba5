const fs = require('fs');
const { getEncoding } = require(process.env.JSTIKTOKEN || 'js-tiktoken');
const [,, name, corpusPath, outPath] = process.argv;
const enc = getEncoding(name);
const corpus = JSON.parse(fs.readFileSync(corpusPath, 'utf8'));
const out = corpus.map(text => ({ text, ids: Array.from(enc.encode(text, [], [])) }));
fs.writeFileSync(outPath, JSON.stringify(out).replace(/\},\{/g, '},\n{') + '\n');
console.log(name, out.length, out.reduce((a, o) => a + o.ids.length, 0));
