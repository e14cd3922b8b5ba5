# Writes ../random.json: 400 seeded random strings built from the pieces
# pre-tokenizer regexes treat specially (case, digits, marks, apostrophes,
# line breaks inside whitespace runs, CJK, emoji, special tokens), for the
# golden files' second corpus. Ids come from node (hf.cjs, tiktoken.cjs).
import json, random
r = random.Random(20261202)
atoms = ["the", " the", "The", "THE", "water", " house", "Hello", "WORLD", "camelCase", "HTTPServer",
    "'s", "'S", "'ll", "'LL", "'re", "'ve", "'m", "'d", "'x", "it's", "don't", "O'Neil",
    "0", "7", "42", "123", "1234", "12345", "3.14", "1,000", "٣٤", "½", "①", "²",
    " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n", "\n ", " \n ", "\t\n", "\u00a0", "\u3000",
    ".", ",", "!", "?", "...", "--", "/", "//", "(", ")", "[", "]", "{", "}", "\"", "#", "$", "%", "&", "*", "+", "=", "<", ">", "@", "\\", "^", "_", "`", "|", "~",
    "é", "É", "ß", "ǅ", "ʰ", "e\u0301", "\u0301", "ñ", "Ω", "ω", "Я", "я", "ا", "ש",
    "你", "你好", "世界", "日本", "カタカナ", "ひらがな", "한국어", "สวัสดี", "नमस्ते",
    "😀", "👋🏽", "👨‍👩‍👧", "🇫🇷", "❤️", "✅", "\x7f", "\x01", "\x1b",
    "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<|", "|>"]
out = []
for i in range(400):
    n = r.randint(1, 14)
    out.append("".join(r.choice(atoms) for _ in range(n)))
json.dump(out, open('../random.json', 'w'), ensure_ascii=False, indent=0)
print(len(out))
