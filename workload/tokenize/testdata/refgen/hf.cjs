// Produces reference ids with @lenml/tokenizers (a JS port of HF tokenizers).
const fs = require('fs');
const { TokenizerLoader } = require(process.env.LENML || '@lenml/tokenizers');
const [,, tokJSON, tokCfg, corpusPath, outPath] = process.argv;
const tok = TokenizerLoader.fromPreTrained({
  tokenizerJSON: JSON.parse(fs.readFileSync(tokJSON, 'utf8')),
  tokenizerConfig: JSON.parse(fs.readFileSync(tokCfg, 'utf8')),
});
const corpus = JSON.parse(fs.readFileSync(corpusPath, 'utf8'));
const out = corpus.map(text => ({ text, ids: tok.encode(text, { add_special_tokens: false }) }));
fs.writeFileSync(outPath, JSON.stringify(out, null, 0).replace(/\},\{/g, '},\n{') + '\n');
console.log(outPath, out.length, out.reduce((a, o) => a + o.ids.length, 0));
