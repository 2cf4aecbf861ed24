// Writes corpus.jsonl: one JSON-encoded string per line (texts may hold
// newlines, NUL and other controls, so they are never stored raw).
// Deterministic: a fixed seed, no input. Run: node make_corpus.mjs
//
// Only code points assigned in Unicode 15.0 or earlier (Debian's ICU 72) are
// drawn, plus a few that are unassigned in every version, so that the C++ side
// and Node (whose ICU is newer) agree on what is "unassigned".
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

// mulberry32: small, seedable, identical on every Node version.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(20240611);
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const chance = (p) => rand() < p;

// ---------------------------------------------------------------- hand-written
const hand = [
  '',
  ' ',
  '\t\n\r ',
  'Hello, world!',
  'hello world',
  'HELLO WORLD',
  'The quick brown fox jumps over the lazy dog.',
  "I can't believe it's not butter!",
  'unaffable',
  'UNAFFABLE unaffable Unaffable',
  'Héllò hôw are ü?',
  'Crème brûlée, naïve café, façade, jalapeño, smörgåsbord, Ærøskøbing.',
  'Straße, STRASSE, ẞ, ß',
  'Ǆemal ǅemal ǆemal',
  'ﬁne ﬂow ﬀ ﬃ ﬄ ﬅ ﬆ',
  'Kelvin: 273\u212A, Ohm: 5\u2126, Ångström: 1\u212B',
  // Turkish dotted/dotless i: U+0130 lower-cases to i + U+0307.
  'İstanbul İZMİR ıspanak Iğdır DİYARBAKIR',
  '\u0130',
  'i\u0307',
  // Greek final sigma: Hugging Face's Rust lower-cases per code point (σ).
  'ΟΔΥΣΣΕΥΣ',
  'ΛΟΓΟΣ ΚΑΙ ΜΥΘΟΣ.',
  'Σ',
  'ΑΣ',
  'ΑΣ.',
  'ΑΣΑ',
  'σοφός σοφὸς ΣΟΦΟΣ Σοφός',
  'Καλημέρα κόσμε, πώς είσαι;',
  'Ελληνικά: ά έ ή ί ό ύ ώ ϊ ϋ ΐ ΰ',
  'Привет, мир! Как дела?',
  'ПРИВЕТ МИР ЁЛКА ёлка Йошкар-Ола',
  'Українська мова: ї, є, ґ, Ї, Є, Ґ.',
  'مرحبا بالعالم',
  'اَلْعَرَبِيَّةُ لُغَةٌ جَمِيلَةٌ',
  'שָׁלוֹם עוֹלָם',
  'שלום עולם',
  'नमस्ते दुनिया',
  'हिन्दी भाषा बहुत सुंदर है।',
  'ক্ষুধার্ত বাংলা',
  'தமிழ் மொழி',
  'สวัสดีชาวโลก',
  'ภาษาไทยมีวรรณยุกต์ ่ ้ ๊ ๋',
  'こんにちは世界',
  'カタカナとひらがなと漢字',
  'ｶﾀｶﾅ ﾊﾝｶｸ',
  '你好，世界！',
  '中华人民共和国成立于1949年。',
  '我爱北京天安门',
  '繁體中文與简体中文',
  '안녕하세요 세계',
  '한국어 문장입니다.',
  'ᄀᄁᄂ ᅡᅢᅣ ᆨᆩᆪ',
  'Tiếng Việt có nhiều dấu: ắ ằ ẳ ẵ ặ ố ồ ổ ỗ ộ',
  'Ⓐⓑⓒ ①②③ ⅰⅱⅲ Ⅳ Ⅻ',
  'Ｆｕｌｌｗｉｄｔｈ　ＴＥＸＴ，ｗｉｔｈ　ｐｕｎｃｔｕａｔｉｏｎ！',
  '１２３４５６７８９０ ＡＢＣ ａｂｃ',
  '𝐁𝐨𝐥𝐝 𝑰𝒕𝒂𝒍𝒊𝒄 𝔉𝔯𝔞𝔨𝔱𝔲𝔯 𝕯𝖔𝖚𝖇𝖑𝖊',
  // CJK ideographs outside the BMP and compatibility ideographs.
  '𠀀𠀁𠀂 abc𠀃def',
  'x𪜀y𫝀z𫠠w𬺰v',
  'a\u{2B820}b\u{2B920}c',
  'ab\uF900cd\uFA0Eef\u{2F800}gh',
  '⺀⺁ ⼀⼁ 〇 々 〆',
  // Emoji, skin tones, ZWJ sequences, flags, keycaps, variation selectors.
  '😀😃😄 😁',
  'I ❤️ NY',
  '👍🏻👍🏼👍🏽👍🏾👍🏿',
  '👨‍👩‍👧‍👦 family',
  '👩🏽‍💻 coding',
  '🏳️‍🌈 🏴‍☠️',
  '🇺🇸🇬🇧🇯🇵',
  '1️⃣ 2️⃣ #️⃣',
  '☺︎ ☺️',
  'emoji🙂inside🙃words',
  // Zero-width and format characters.
  'zero\u200Bwidth\u200Cnon\u200Djoiner',
  'soft\u00ADhyphen',
  '\uFEFFbyte order mark',
  'word\u2060joiner',
  'left\u200Eto\u200Fright',
  'bidi \u202Aembedded\u202C \u2066isolate\u2069',
  // Controls, NUL and the replacement character.
  'null\u0000char',
  'bell\u0007 backspace\u0008 escape\u001B[0m',
  'tab\tnewline\ncarriage\rreturn',
  'vertical\u000Btab form\u000Cfeed',
  'next\u0085line',
  'c1 \u0080\u0081\u009F controls',
  'del\u007Fete',
  'replacement \uFFFD char',
  '\uFFFD\uFFFD\uFFFD',
  // Unassigned (Cn) and private-use (Co) code points.
  'unassigned\u0378here',
  'noncharacter\uFFFEand\uFFFF',
  'private\uE000use\u{F0000}',
  'tag\u{E0041}\u{E0042}chars',
  // Whitespace variants.
  'no\u00A0break\u00A0space',
  'ideographic\u3000space',
  'en\u2002em\u2003thin\u2009hair\u200Asix\u2006',
  'line\u2028separator\u2029paragraph',
  'ogham\u1680space',
  'narrow\u202Fno-break\u205Fmath',
  'mongolian\u180Evowel',
  '   leading and trailing   ',
  'multiple     spaces\t\t\ttabs\n\n\nnewlines',
  // Combining marks, decomposed and precomposed.
  'e\u0301 é e\u0301\u0302 ê\u0301',
  'a\u0308o\u0308u\u0308 äöü',
  'Z\u0351\u0352\u0353a\u0354\u0355l\u0356\u0357g\u0358\u0359o\u035A',
  'q\u0323\u0307 q\u0307\u0323',
  '\u0301\u0302 leading combining',
  'x\u20DD y\u20DE z\u20E3',
  'ǖǘǚǜ ǕǗǙǛ',
  'Å\u030A',
  // Punctuation of every kind.
  'Hello...world!!! What??? (yes) [no] {maybe} <tag>',
  '"quoted" \'single\' `back` «guillemets» „German“ ‘curly’ “double”',
  'em—dash en–dash hyphen-minus ‐ ‑ ‒ ―',
  '¿Qué? ¡Hola! ‽ ⁇ ⁈ ⁉',
  '§1 ¶2 † ‡ • ‣ ※ ⁂',
  '、。〃〈〉《》「」『』【】〔〕〖〗〘〙〚〛',
  '~!@#$%^&*()_+-=[]\\{}|;\':",./<>?',
  '$100 €50 £30 ¥1000 ₹500 ₩1000 ₿0.5 ¢99',
  '+-×÷=≠≈≤≥∞∑∏∫√∂∆∇',
  '←↑→↓↔↕ ⇐⇒⇔ ➡ ⬅',
  '©®™ ℠ ℗ ℃ ℉ № ℮',
  '½ ¼ ¾ ⅓ ⅔ ⅛',
  'x² y³ H₂O CO₂ E=mc²',
  // Numbers.
  '3.14159 2,718.28 1e-10 6.022E23 0x1F 0b1010 0o777',
  '+1 (555) 123-4567, 2023-10-05T14:30:00Z, 12/31/1999',
  '1,000,000 1.000.000 1 000 000 10\u202F000',
  '٠١٢٣٤٥٦٧٨٩ ۰۱۲۳۴۵۶۷۸۹ ०१२३४५६७८९ ๐๑๒๓',
  '99.9% 50‰ -273.15°C',
  // URLs, e-mails, paths, code.
  'https://www.example.com/path/to/page?query=value&other=123#fragment',
  'Visit http://例子.测试/路径 or https://пример.рф/страница',
  'mailto:john.doe+tag@example.co.uk',
  'ftp://user:pass@host:21/dir/file.tar.gz',
  'C:\\Program Files\\App\\app.exe /usr/local/bin/python3',
  'int main(int argc, char** argv) { return argc > 1 ? 0 : -1; }',
  'def f(x): return [i**2 for i in range(x) if i % 2 == 0]',
  '{"key": "value", "list": [1, 2.5, null, true], "nested": {"a": {}}}',
  '<div class="container"><p>Hello &amp; welcome</p></div>',
  'SELECT * FROM users WHERE id = 42 AND name LIKE \'%smith%\';',
  'const add = (a, b) => a + b; // arrow function',
  '$ grep -rn "TODO" src/ | wc -l && echo done',
  'git commit -m "Fix #123: handle edge-case"',
  '#hashtag @mention $CASHTAG',
  'snake_case_identifier camelCaseIdentifier PascalCaseIdentifier kebab-case-identifier',
  // Special-token literals are matched in the raw text, case-sensitively.
  '[CLS] hello [SEP]',
  'The capital of France is [MASK].',
  '[MASK][MASK][MASK]',
  'a[SEP]b[PAD]c[UNK]d',
  '[mask] [Mask] [ MASK ] [MASK',
  '[[MASK]]',
  '[UNK]',
  '[CLS]',
  '[SEP][SEP]',
  '##s ## #',
  // Words around the 100-character limit.
  'a'.repeat(100),
  'a'.repeat(101),
  'b'.repeat(99) + ' ' + 'c'.repeat(102),
  'é'.repeat(100),
  'É'.repeat(101),
  'e\u0301'.repeat(100),
  'supercalifragilisticexpialidocious'.repeat(3),
  'pneumonoultramicroscopicsilicovolcanoconiosis',
  'Lopadotemachoselachogaleokranioleipsanodrimhypotrimmatosilphiokarabomelitokatakechymenokichlepikossyphophattoperisteralektryonoptekephalliokigklopeleiolagoiosiraiobaphetraganopterygon',
  '1234567890'.repeat(12),
  'https://example.com/' + 'x'.repeat(120),
  // Misc.
  "Don't stop believin' — y'all're gonna love it.",
  'U.S.A. e.g. i.e. etc. Mr. Dr. Ph.D.',
  'rock\'n\'roll o\'clock',
  'Well-known, state-of-the-art, up-to-date.',
  '#1 ranked; 2nd place; 3rd; 4th',
  'ALL CAPS SENTENCE WITH NUMBERS 123 AND SYMBOLS !@#',
  'MiXeD cAsE wOrDs',
];

// The split regex of Qwen's (and Llama 3's) byte-level BPE, branch by branch:
// contractions in any case, a non-letter before letters, single digits,
// punctuation runs with their line breaks, whitespace before line breaks and
// before a word. VT (U+000B) and NEL (U+0085), the \s characters outside
// \p{Z} and \t\n\f\r, sit next to spaces; 'ſ (U+017F) folds to 's in a
// case-insensitive match. Appended with the prompts below.
const splitCases = [
  "I'M HERE, YOU'RE THERE, WE'LL SEE, THEY'VE GONE, HE'D GO, IT'S, DON'T",
  "'s 'S 'T 'Re 'rE 'VE 'Ll 'D 'ſ x'ſ",
  'a \u000B b \u000B\u000B c\u000B \u000Bd  \u000B',
  'x \u0085 y\u0085\u0085 z \u0085',
  '\u000B',
  ' \u0085',
  'line1\r\n\r\nline2 \r\n  \n\tline3\n\n  ',
  'trailing spaces then newline   \n   ',
  'digits 1234567890 ١٢٣ ５６ ⅠⅡ ½ x²',
  '$$$hello ...world !!!\n\n--foo ?!\r\n',
  '\u00A0\u00A0word\u3000\u3000x \u2028y\u2029 \u1680z',
  'end with spaces    ',
];

// Prompts of the models these tokenizers serve, built as their model cards
// build them. Appended after the generated lines (below), so that every line
// before them keeps its number.
//
// Qwen3-Reranker-0.6B: prefix + "<Instruct>: ...\n<Query>: ...\n<Document>: ..."
// + suffix; the model card tokenizes the prefix and the suffix alone without
// special tokens, so they are here alone too, as are the middles.
const rerankerPrefix = '<|im_start|>system\nJudge whether the Document meets the requirements based on ' +
  'the Query and the Instruct provided. Note that the answer can only be "yes" or "no".' +
  '<|im_end|>\n<|im_start|>user\n';
const rerankerSuffix = '<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n';
const webSearch = 'Given a web search query, retrieve relevant passages that answer the query';
const queryDocs = [
  ['What is the capital of China?', 'The capital of China is Beijing.'],
  ['Explain gravity', 'Gravity is a force that attracts two bodies towards each other. It gives weight ' +
    'to physical objects and is responsible for the movement of planets around the sun.'],
  ['中国的首都是哪里？', '中国的首都是北京，也是全国的政治和文化中心。'],
  ['Wie hoch ist die Zugspitze?', 'Die Zugspitze ist mit 2962 m ü. NN der höchste Berg Deutschlands.'],
  ['東京タワーの高さは？', '東京タワーの高さは333メートルです。'],
  ['ما هي عاصمة مصر؟', 'القاهرة هي عاصمة مصر وأكبر مدنها.'],
  ['Какая самая длинная река в России?', 'Самая длинная река России — Лена (4 400 км), если не считать Обь с Иртышом.'],
];
const rerankerMiddle = (instruction, query, doc) =>
  `<Instruct>: ${instruction}\n<Query>: ${query}\n<Document>: ${doc}`;
const prompts = [rerankerPrefix, rerankerSuffix];
for (const [query, doc] of queryDocs) {
  const middle = rerankerMiddle(webSearch, query, doc);
  prompts.push(middle, rerankerPrefix + middle + rerankerSuffix);
}
prompts.push(rerankerPrefix + rerankerMiddle('Judge whether the passage is written in French',
  'Le chat dort.', 'Le chat dort sur le canapé depuis ce matin.') + rerankerSuffix);
// Qwen3-Embedding: "Instruct: {task}\nQuery:{query}" (no space after the colon).
for (const [query] of queryDocs) prompts.push(`Instruct: ${webSearch}\nQuery:${query}`);
// EmbeddingGemma: "task: search result | query: " before queries,
// "title: none | text: " before documents.
for (const [query, doc] of queryDocs) {
  prompts.push(`task: search result | query: ${query}`, `title: none | text: ${doc}`);
}
// Added-token literals of those tokenizers in running text: Gemma's turn and
// HTML tokens, ModernBERT's normalized |||…||| tokens beside runs of spaces.
prompts.push(
  '<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n4<end_of_turn>',
  '<bos><eos><pad><unk><mask> <unused0><unused99> [multimodal]<start_of_image><end_of_image>',
  '<table><tr><td>1</td><td>2</td></tr></table> <h1>Title</h1><strong>bold</strong><code>x</code>',
  'Call |||PHONE_NUMBER||| or mail |||EMAIL_ADDRESS||| from |||IP_ADDRESS|||, ok?',
  'indent\n        eight spaces\n\t\ttwo tabs\n\n\n\nfour newlines      six spaces',
  '<|endoftext|><|im_start|>user\n<tool_call>{"name": "f"}</tool_call><|im_end|>',
);

// ---------------------------------------------------------------- word lists
const words = {
  en: ['the', 'of', 'and', 'model', 'encoder', 'inference', 'latency', 'throughput', 'server', 'token',
    'embedding', 'transformer', 'attention', 'quickly', 'running', 'unbelievable', 'tokenization',
    'preprocessing', 'hello', 'world', 'microservice', 'Kubernetes', 'Prometheus', 'gRPC', 'CPU',
    'AVX-512', 'batch', 'queue', 'deadline', 'metrics', 'OpenAI', 'HuggingFace', 'PyTorch', 'sentence',
    'similarity', 'retrieval', 'question', 'answering', 'classification', 'sentiment', 'wasn\'t',
    'they\'re', 'co-operate', 'e-mail', 'COVID-19', 'iPhone', 'McDonald\'s', 'antidisestablishmentarianism'],
  fr: ['élève', 'château', 'garçon', 'où', 'Noël', 'cœur', 'œuvre', 'déjà', 'français', 'hôpital',
    'forêt', 'maïs', 'Éléphant', 'ÉCOLE', 'qu\'il', 'aujourd\'hui'],
  de: ['Mädchen', 'Größe', 'Übung', 'schön', 'Fußball', 'Käse', 'ÄRGER', 'Öl', 'über', 'Straßenbahn',
    'Donaudampfschifffahrtsgesellschaftskapitän'],
  es: ['niño', 'año', 'corazón', 'pingüino', 'acción', 'Señor', 'ÁRBOL', 'mañana', 'está'],
  pl: ['źdźbło', 'żółć', 'Łódź', 'gęślą', 'jaźń', 'ŻÓŁW'],
  cs: ['příliš', 'žluťoučký', 'kůň', 'úpěl', 'ďábelské', 'ódy', 'ŘEKA'],
  tr: ['İstanbul', 'ığdır', 'şeker', 'çiçek', 'öğrenci', 'Ünlü', 'İYİ', 'ISPARTA', 'DİYARBAKIR'],
  vi: ['Việt', 'Nam', 'người', 'ngữ', 'tiếng', 'đẹp', 'Hồ', 'Chí', 'Minh', 'ĐƯỜNG'],
  el: ['λόγος', 'ΛΟΓΟΣ', 'Σωκράτης', 'ΣΩΚΡΑΤΗΣ', 'ἄνθρωπος', 'ψυχή', 'Ἀθῆναι', 'ΑΘΗΝΑΣ', 'ὁδός',
    'φιλοσοφία', 'σχολείο', 'ΟΔΟΣ', 'Ἑλλάς', 'ῥήτωρ'],
  ru: ['Москва', 'МОСКВА', 'ёжик', 'Ёжик', 'съешь', 'ещё', 'этих', 'мягких', 'французских', 'булок',
    'да', 'выпей', 'чаю', 'Щука', 'объявление'],
  uk: ['їжак', 'Євген', 'ґанок', 'ЇЖАК'],
  ar: ['العربية', 'مرحبا', 'كِتَابٌ', 'مَدْرَسَةٌ', 'سلام', 'القاهرة', 'شُكْرًا', 'إنشاء', 'ﻻ', 'ﷲ'],
  he: ['עברית', 'שָׁלוֹם', 'ירושלים', 'תּוֹרָה', 'ספר'],
  fa: ['فارسی', 'زبان', 'کتاب', 'گل'],
  hi: ['हिन्दी', 'नमस्ते', 'भारत', 'क्षत्रिय', 'ज्ञान', 'श्री', 'कृष्ण', 'प्रेम', 'संस्कृत'],
  bn: ['বাংলা', 'ভাষা', 'কলকাতা'],
  ta: ['தமிழ்', 'சென்னை'],
  th: ['ภาษาไทย', 'สวัสดี', 'กรุงเทพมหานคร', 'ขอบคุณ', 'น้ำ', 'ที่นี่'],
  ka: ['ქართული', 'თბილისი'],
  hy: ['Հայաստան', 'հայերեն'],
  zh: ['中国', '北京', '上海', '机器学习', '自然语言处理', '模型', '推理', '服务器', '繁體字', '龍', '鑫'],
  ja: ['日本語', '東京', 'ひらがな', 'カタカナ', 'ありがとう', 'ラーメン', '寿司', 'ｱｲｳｴｵ'],
  ko: ['한국어', '서울', '감사합니다', '사랑해요', '대한민국', '컴퓨터'],
  emoji: ['😀', '😂', '🤔', '🙏', '🔥', '✨', '🎉', '💯', '🚀', '❤️', '👍🏽', '👋🏿', '🧑‍🚀', '👩‍❤️‍👨',
    '🏳️‍⚧️', '🇩🇪', '🇫🇷', '9️⃣', '🤷🏼‍♀️', '🫠', '🥲', '☕', '⌚', '©️'],
  symbol: ['&', '@', '#', '%', '...', '—', '–', '→', '€', '$', '±', '°', '№', '™', '•', '·', '…', '‰',
    '∀', '∃', '∈', '∉', '⊂', '∧', '∨', '¬', '⊕', '♠', '♣', '♥', '♦', '★', '☆', '✓', '✗'],
  num: ['0', '1', '42', '3.14', '1,024', '2024', '1e6', '-7', '50%', '100km', '3rd', '½', '٣', '४', '๔',
    '１２', 'Ⅻ', '⑦'],
};
const langs = Object.keys(words);

const separators = [' ', ' ', ' ', ' ', '  ', '\t', '\n', '\r\n', '\u00A0', '\u3000', '\u2003', '\u2009',
  '\u202F', '\u2028', ' \u200B', '\u200B', '\u00AD', '\u200D', '\u0000', '\u0001', '\u001F', '\u007F',
  '\u0085', '\uFEFF', '\uFFFD'];
const puncts = ['.', ',', '!', '?', ';', ':', '-', '(', ')', '"', '\'', '/', '…', '«', '»', '“', '”', '、',
  '。', '！', '？', '¿', '¡', '—', '·', '‘', '’', '[', ']', '{', '}', '*', '_', '~', '^', '|', '\\', '§',
  '¶', '٪', '؟', '।', '॥', '፡', '་', '။', '៖', '〜', '〽', '＃', '＆', '＠'];

function sentence(langPool, nWords) {
  const parts = [];
  for (let i = 0; i < nWords; ++i) {
    let w = pick(words[pick(langPool)]);
    const r = rand();
    if (r < 0.08) w = w.toUpperCase();
    else if (r < 0.16) w = w[0].toUpperCase() + w.slice(1);
    if (chance(0.15)) w += pick(puncts);
    if (chance(0.05)) w = pick(puncts) + w;
    if (chance(0.03)) w += pick(words.emoji);
    parts.push(w);
    if (i + 1 < nWords) parts.push(chance(0.8) ? ' ' : pick(separators));
  }
  if (chance(0.5)) parts.push(pick(['.', '!', '?', '。', '…', '']));
  return parts.join('');
}

// Code point soup from blocks that were complete by Unicode 15.0.
const blocks = [
  [0x0020, 0x007e], [0x00a0, 0x00ff], [0x0100, 0x024f], [0x0250, 0x02af], [0x0300, 0x036f],
  [0x0391, 0x03a1], [0x03a3, 0x03ff], [0x0400, 0x04ff], [0x0531, 0x0556], [0x0561, 0x0587],
  [0x05d0, 0x05ea], [0x05b0, 0x05c7], [0x0600, 0x06ff], [0x0900, 0x097f], [0x0980, 0x0983],
  [0x0e01, 0x0e3a], [0x0e3f, 0x0e5b], [0x10a0, 0x10c5], [0x10d0, 0x10ff], [0x1100, 0x11ff],
  [0x1e00, 0x1eff], [0x1f00, 0x1f15], [0x1f18, 0x1f1d], [0x1f20, 0x1f45], [0x1f50, 0x1f57],
  [0x1f80, 0x1fb4], [0x2000, 0x2064], [0x2070, 0x2071], [0x20a0, 0x20c0], [0x20d0, 0x20f0],
  [0x2100, 0x214f], [0x2150, 0x218b], [0x2190, 0x21ff], [0x2200, 0x22ff], [0x2460, 0x24ff],
  [0x2500, 0x257f], [0x2600, 0x26ff], [0x2e80, 0x2e99], [0x2f00, 0x2fd5], [0x3000, 0x303f],
  [0x3041, 0x3096], [0x3099, 0x30ff], [0x3131, 0x318e], [0x3400, 0x4dbf], [0x4e00, 0x9fff],
  [0xac00, 0xd7a3], [0xf900, 0xfa6d], [0xfb00, 0xfb06], [0xfe30, 0xfe4f], [0xff01, 0xffbe],
  [0x1d400, 0x1d454], [0x1f300, 0x1f5ff], [0x1f600, 0x1f64f], [0x1f680, 0x1f6c5], [0x1f900, 0x1f9ff],
  [0x1f3fb, 0x1f3ff], [0x20000, 0x2a6df], [0x2a700, 0x2b739], [0x2b740, 0x2b81d], [0x2b820, 0x2cea1],
  [0x2f800, 0x2fa1d], [0x0000, 0x001f], [0x007f, 0x009f], [0xe000, 0xe0ff], [0xfff9, 0xfffd],
];
function soupChar() {
  for (;;) {
    const [lo, hi] = pick(blocks);
    const ch = String.fromCodePoint(int(lo, hi));
    // Skip what is unassigned in Node's (newer) Unicode; \p{Cn} there is a
    // subset of ICU 72's, and the blocks above hold nothing newer than 15.0.
    if (!/\p{Cn}/u.test(ch)) return ch;
  }
}
function soup(n) {
  let s = '';
  for (let i = 0; i < n; ++i) s += chance(0.12) ? ' ' : soupChar();
  return s;
}

function longWord() {
  const alphabets = ['abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'éèêëàâäôöûüçñ',
    'αβγδεζηθικλμνξοπρστυφχψω', 'абвгдеёжзийклмнопрстуфхцчшщъыьэюя', '0123456789'];
  const alpha = [...pick(alphabets)];
  const len = pick([98, 99, 100, 100, 101, 101, 102, 110, 150, 250]);
  let w = '';
  for (let i = 0; i < len; ++i) w += pick(alpha);
  return w;
}

const urlHosts = ['example.com', 'sub.domain.co.uk', 'localhost:8080', '127.0.0.1', 'huggingface.co',
  'github.com', 'münchen.de', '例え.jp'];
const urlPaths = ['index.html', 'api/v1/users/42', 'search?q=hello+world&lang=en', 'a/b/c/d.png',
  'wiki/Main_Page', '%E4%BD%A0%E5%A5%BD', 'path;params?x=1#top', '~user/files/', 'very-long-slug-with-many-words'];
function url() {
  return `${pick(['http', 'https', 'ftp', 'ws'])}://${pick(urlHosts)}/${pick(urlPaths)}`;
}

const codeLines = [
  'for (size_t i = 0; i < n; ++i) { sum += a[i] * b[i]; }',
  'std::unique_ptr<Tokenizer> tok = Tokenizer::Load("dir").value();',
  'if x is not None and len(x) > 0: print(f"{x!r:>10}")',
  'fn main() { println!("{:?}", vec![1, 2, 3]); }',
  'let obj = { a: 1, "b-c": [true, false], ...rest };',
  'SELECT COUNT(*) AS n FROM t GROUP BY k HAVING n > 1;',
  '#include <iostream>\nint main() {\n\tstd::cout << "hi\\n";\n}',
  'x = y ** 2 // 3 % 4 << 1 >> 2 & 0xFF | 0b1 ^ ~z',
  'regex: ^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$',
  'a->b, c::d, e=>f, g..h, i...j, k?.l, m??n, o!==p',
  '<?xml version="1.0" encoding="UTF-8"?><root attr=\'v\'/>',
  '$ curl -sSL -X POST -H "Content-Type: application/json" -d \'{"q":1}\' http://localhost:9000/v1/encode',
];

// ---------------------------------------------------------------- assemble
const lines = [...hand];
const all = langs.filter((l) => l !== 'emoji' && l !== 'symbol' && l !== 'num');
for (let i = 0; i < 700; ++i) {
  // Mostly one script, sometimes a mix, with numbers and symbols sprinkled in.
  const main = pick(all);
  const pool = chance(0.6) ? [main, main, main, 'num', 'symbol'] : [main, pick(all), pick(all), 'emoji', 'num'];
  lines.push(sentence(pool, int(1, 25)));
}
for (let i = 0; i < 350; ++i) lines.push(soup(int(1, 60)));
for (let i = 0; i < 120; ++i) {
  const parts = [sentence(['en', 'fr', 'de'], int(0, 4)), longWord(), sentence(['en', 'ru', 'zh'], int(0, 4))];
  lines.push(parts.join(pick([' ', '-', ', ', '\t'])));
}
for (let i = 0; i < 150; ++i) {
  const s = [sentence(['en'], int(1, 6)), url(), sentence(['en', 'num'], int(0, 5))];
  if (chance(0.3)) s.push(`<${pick(['a', 'b'])}@${pick(urlHosts)}>`);
  lines.push(s.join(' '));
}
for (let i = 0; i < 100; ++i) lines.push(pick(codeLines) + (chance(0.5) ? ' ' + pick(codeLines) : ''));
for (let i = 0; i < 150; ++i) {
  // Numbers, dates, amounts and units in various formats.
  const fmt = [
    () => `${int(0, 99999)}.${int(0, 999)}`,
    () => `${int(1, 28)}/${int(1, 12)}/${int(1900, 2099)}`,
    () => `${int(1900, 2099)}-${String(int(1, 12)).padStart(2, '0')}-${String(int(1, 28)).padStart(2, '0')}`,
    () => `${pick(['$', '€', '£', '¥', '₹', '₽'])}${int(1, 999999).toLocaleString('en-US')}`,
    () => `${int(0, 100)}%`,
    () => `${int(-50, 50)}°${pick(['C', 'F'])}`,
    () => `+${int(1, 99)} ${int(100, 999)} ${int(1000, 9999)}`,
    () => `${(rand() * 1e6).toExponential(int(0, 6))}`,
    () => `v${int(0, 9)}.${int(0, 20)}.${int(0, 99)}-rc${int(1, 5)}`,
    () => `${int(1, 999)}${pick(['km', 'kg', 'ms', 'GB', 'MHz', 'px', 'mm²'])}`,
    () => String(int(0, 2 ** 31)),
  ];
  const k = int(1, 8);
  const parts = [];
  for (let j = 0; j < k; ++j) parts.push(chance(0.7) ? pick(fmt)() : pick(words.en));
  lines.push(parts.join(pick([' ', ', ', '; ', ' / '])));
}
for (let i = 0; i < 150; ++i) {
  // Controls, format characters and odd whitespace injected into text.
  const base = [...sentence(all, int(2, 10))];
  const noise = ['\u0000', '\u0001', '\u0008', '\u000B', '\u000C', '\u001B', '\u007F', '\u0085', '\u009B',
    '\u00AD', '\u200B', '\u200C', '\u200D', '\u200E', '\u200F', '\u202A', '\u202E', '\u2060', '\u2063',
    '\uFEFF', '\uFFFD', '\uFFFE', '\uFFFF', '\uE000', '\u{F0001}', '\u{E0001}', '\u{E0067}', '\u0378',
    '\t', '\n', '\r', '\u00A0', '\u1680', '\u2000', '\u2005', '\u200A', '\u2028', '\u2029', '\u205F',
    '\u3000', '\u180E', '\uFE0F', '\uFE0E', '\u034F', '\u0300', '\u0327'];
  const n = int(1, 6);
  for (let j = 0; j < n; ++j) base.splice(int(0, base.length), 0, pick(noise));
  lines.push(base.join(''));
}
for (let i = 0; i < 120; ++i) {
  // Combining sequences: base letters with 1-4 random marks, in random order.
  let s = '';
  const n = int(1, 12);
  for (let j = 0; j < n; ++j) {
    s += pick([...'aeiouAEIOUnczsNCZSαεοАЕОиИ']);
    const m = int(0, 4);
    for (let k = 0; k < m; ++k) s += String.fromCodePoint(int(0x0300, 0x036f));
    if (chance(0.3)) s += ' ';
  }
  lines.push(s);
}
for (let i = 0; i < 100; ++i) {
  // Emoji runs with modifiers, ZWJ sequences and variation selectors.
  let s = '';
  const n = int(1, 10);
  for (let j = 0; j < n; ++j) {
    s += pick(words.emoji);
    if (chance(0.2)) s += String.fromCodePoint(int(0x1f3fb, 0x1f3ff));
    if (chance(0.15)) s += '\u200D' + pick(words.emoji);
    if (chance(0.3)) s += pick([' ', '', pick(words.en)]);
  }
  lines.push(s);
}
for (let i = 0; i < 80; ++i) {
  // Special-token literals in running text.
  const toks = ['[CLS]', '[SEP]', '[MASK]', '[PAD]', '[UNK]', '[mask]', '[MASK', 'MASK]', '[ CLS ]'];
  const parts = [];
  const n = int(2, 8);
  for (let j = 0; j < n; ++j) parts.push(chance(0.4) ? pick(toks) : pick(words[pick(all)]));
  lines.push(parts.join(pick([' ', '', '  ', '\t'])));
}
for (let i = 0; i < 100; ++i) {
  // CJK mixed with Latin without spaces, including ideographs outside the BMP.
  let s = '';
  const n = int(2, 20);
  for (let j = 0; j < n; ++j) {
    const r = rand();
    if (r < 0.3) s += String.fromCodePoint(int(0x4e00, 0x9fff));
    else if (r < 0.4) s += String.fromCodePoint(int(0x20000, 0x2a6df));
    else if (r < 0.45) s += String.fromCodePoint(int(0xf900, 0xfa6d));
    else if (r < 0.5) s += String.fromCodePoint(int(0x2b820, 0x2b9ff));
    else if (r < 0.6) s += String.fromCodePoint(int(0x3041, 0x3096));
    else if (r < 0.7) s += String.fromCodePoint(int(0xac00, 0xd7a3));
    else if (r < 0.85) s += pick(words.en);
    else s += pick(['，', '。', '、', '：', ' ', '1', '2024', '（', '）']);
  }
  lines.push(s);
}
// Upper-cased and title-cased copies of some lines exercise lower-casing.
const sample = lines.slice(0, 400);
for (let i = 0; i < 120; ++i) lines.push(pick(sample).toUpperCase());
// Greek upper case with word-final sigma in all positions.
for (let i = 0; i < 40; ++i) lines.push(sentence(['el'], int(1, 8)).toUpperCase());
// The split cases and the models' prompts (above) last: no random draw depends
// on them, and the prompts close the file (make_rust_reference.mjs finds them).
lines.push(...splitCases, ...prompts);

const out = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
writeFileSync(join(here, 'corpus.jsonl'), out);
console.log(`corpus.jsonl: ${lines.length} lines, ${out.length} UTF-16 units`);
