/**
 * The receipts bench's headline: merchant-grouped cross-validation of the embedded extractor over the SROIE
 * development folders, beside the plain scores of each folder. Receipts are grouped by merchant (the ground truth's
 * company name without its legal-entity suffix), every merchant's receipts fall in one fold, and for each fold the
 * business-name weights (`src/engines/extract/issuer-weights.ts`) are fitted on the other folds, starting from the
 * same fixed prior, and scored on it. A weight that only helps its own merchant cannot help its fold there. Each
 * field's confidence is judged by the area under its ROC curve on the cross-validated predictions (1: every right
 * answer is more confident than every wrong one; 0.5: no better than chance).
 *
 *   npx tsx bench/receipts-cv.ts [--data DIR]... [--cache DIR] [--engine ppocr|tesseract] [--decoder greedy|beam]
 *                                [--reread below=0.9,variants=contrast+pad] [--space P] [--breaks space-only]
 *                                [--folds N] [--fit] [--verbose] [--speed] [--parts]
 *
 * Layouts come from bench/receipt-layouts.ts's cache (default /tmp/sroie-layouts/<engine>), so after the first OCR
 * pass a run takes seconds. `--fit` also prints the weights fitted on every merchant (what the service ships).
 * Rules are judged as mechanisms (`RULE_GROUPS` in src/engines/extract/rule-switches.ts): a mechanism is on in a fold
 * when it makes more training merchants right than wrong. The second line judges every part of a mechanism alone
 * instead, the stricter reading; the gap between the two lines is what grouping parts into mechanisms assumes.
 * `--parts` also lists what each part changes.
 * `--speed` (always on under `npm run bench -- receipts`) adds the time per receipt through a started server, split
 * into OCR and extraction, wall and CPU (bench/receipts-speed.ts), over the first data folder.
 * The data folders default to `sroie-dev` and `sroie-dev2` of the shared folder (`PRISM_TEST_SHARED_DIR`, else the
 * `shared` folder beside the checkout).
 * What this cannot measure: the rules themselves were written by people who had read these receipts, so the
 * cross-validated figures still flatter unseen merchants by whatever the rules memorised (see
 * docs/extraction-accuracy.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createLayoutIndex,
  extractFromLayout,
  issuerChoices,
  NAME_FEATURES,
  NAME_WEIGHTS,
  RULE_PARTS,
  RULES,
  type NameFeatures,
  type NameWeights,
} from '../src/engines/extract';
import type { OcrEngineKind } from '../src/engines/ocr/ocr.engine';
import type { OcrDecoder, RereadSettings } from '../src/engines/ocr/ppocr.engine';
import type { OcrHead } from '../src/engines/ocr/ppocr-head';
import type { DocumentLayout } from '../src/engines/types';
import { layoutsFor, layoutVariant, parseBreaks, parseHead, parseReread } from './receipt-layouts';
import { SPACE_PROBABILITY_ONLY } from '../src/engines/ocr/ctc-word-breaks';
import { sharedDataDir } from './receipts-score';
import { receiptSpeed } from './receipts-speed';

type Fields = Record<string, unknown>;
interface FieldReport {
  correct: number;
  n: number;
  accuracy: number;
  non_empty: number;
}
interface ScoreReport {
  fields: Record<string, FieldReport>;
  micro: { precision: number; recall: number; f1: number };
  receipts: { id: string; fields: Record<string, { pred: unknown; truth: string; ok: boolean }> }[];
}
export interface EvalModule {
  SCHEMA: Record<string, unknown>;
  FIELDS: string[];
  score: (
    ids: string[],
    truths: Record<string, Fields>,
    records: Record<string, { prediction: Fields }>,
  ) => ScoreReport;
  fieldCorrect: (field: string, pred: unknown, truth: unknown) => boolean;
}

/**
 * The weights every fold starts from: the hand-set values the business-name rules had before any fitting. Fixed
 * here, not read from the shipped weights, which were fitted on every fold.
 */
export const PRIOR_WEIGHTS: NameWeights = {
  ocr: 0.6,
  rank: -0.25,
  legal: 2,
  business: 1,
  upper: 0.3,
  lower: -1,
  tall: 0.4,
  wide: 0,
  afterTitle: -1.5,
  addressBelow: 0.8,
  registration: 0,
  region: 0,
  branch: 0,
};

/** A rule stays on only when it makes more of the merchants it is fitted on right than wrong, by at least this many. */
const RULE_MARGIN = 1;

/** Confidence levels at which the report gives how many answers reach them and how many of those are right. */
const CONFIDENCE_CUTS = [0.7, 0.85];

const GRID = [-3, -2, -1.5, -1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1, 1.5, 2, 3];
const LEGAL = /\b(SDN|BHD|S\/B|SB|PLT|LTD|LIMITED|LLC|LLP|INC|CORP|PTE|PTY|PLC|M)\b/g;

export interface Choice {
  features: NameFeatures;
  companyOk: boolean;
  addressOk: boolean;
}
export interface Receipt {
  id: string;
  set: string;
  merchant: string;
  truth: Fields;
  layout: DocumentLayout;
  choices: Choice[];
}

export interface Args {
  data: string[];
  cache: string;
  engine: OcrEngineKind;
  /** PP-OCR's CTC decoder; `beam` layouts are cached apart (`<engine>-beam`). */
  decoder: OcrDecoder;
  /** A second read of doubtful crops (ppocr.engine.ts `reread`); such layouts are cached apart. */
  reread?: RereadSettings;
  /** Greedy decoding's space threshold (ppocr.engine.ts `spaceThreshold`); such layouts are cached apart. */
  space?: number;
  /** `--breaks space-only`: words apart by the space class alone, as before the gap rules (ctc-word-breaks.ts). */
  spaceOnly?: boolean;
  /** `--head receipts`: the recogniser's output layer refitted on receipt lines (ppocr-head.ts); cached apart. */
  head: OcrHead;
  folds: number;
  fit: boolean;
  verbose: boolean;
  speed: boolean;
  parts: boolean;
}

export function parseArgs(argv: string[]): Args {
  const args: Args = {
    data: [],
    cache: '/tmp/sroie-layouts',
    engine: 'ppocr',
    decoder: 'greedy',
    head: 'shipped',
    folds: 10,
    fit: false,
    verbose: false,
    speed: false,
    parts: false,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = (): string => argv[++i] ?? '';
    if (flag === '--data') args.data.push(path.resolve(value()));
    else if (flag === '--cache') args.cache = path.resolve(value());
    else if (flag === '--engine') args.engine = value() as OcrEngineKind;
    else if (flag === '--decoder') args.decoder = value() === 'beam' ? 'beam' : 'greedy';
    else if (flag === '--reread') args.reread = parseReread(value());
    else if (flag === '--space') args.space = Number(value());
    else if (flag === '--breaks') args.spaceOnly = parseBreaks(value());
    else if (flag === '--head') args.head = parseHead(value());
    else if (flag === '--folds') args.folds = Math.max(2, Number(value()) || 10);
    else if (flag === '--fit') args.fit = true;
    else if (flag === '--verbose') args.verbose = true;
    else if (flag === '--speed') args.speed = true;
    else if (flag === '--parts') args.parts = true;
    else throw new Error(`unknown argument ${flag ?? ''}`);
  }
  if (args.data.length === 0) {
    args.data = ['sroie-dev', 'sroie-dev2'].map((name) => sharedDataDir(name) ?? name);
  }
  return args;
}

/** The merchant a receipt belongs to: its true company name, upper-case, legal suffix and punctuation dropped. */
export function merchantOf(company: string): string {
  return company
    .normalize('NFKC')
    .toUpperCase()
    .replace(/[.,()]/g, ' ')
    .replace(LEGAL, ' ')
    .replace(/[^A-Z0-9]/g, '');
}

/** A stable small hash (FNV-1a), so fold membership does not depend on the order files are listed in. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** Merchants dealt to `k` folds in hash order, so every merchant's receipts share one fold. */
function foldsOf(receipts: Receipt[], k: number): Map<string, number> {
  const merchants = [...new Set(receipts.map((r) => r.merchant))].sort((a, b) => hash(a) - hash(b) || (a < b ? -1 : 1));
  return new Map(merchants.map((m, i) => [m, i % k]));
}

function scoreOf(features: NameFeatures, w: NameWeights): number {
  let s = 0;
  for (const key of NAME_FEATURES) s += features[key] * w[key];
  return s;
}

/** Company and address answers right on `receipts` when the name is chosen with `w`. */
function objective(receipts: readonly { choices: Choice[] }[], w: NameWeights): number {
  let total = 0;
  for (const r of receipts) {
    let best: Choice | undefined;
    let bestScore = -Infinity;
    for (const c of r.choices) {
      const s = scoreOf(c.features, w);
      if (s > bestScore) {
        best = c;
        bestScore = s;
      }
    }
    if (best) total += (best.companyOk ? 1 : 0) + (best.addressOk ? 1 : 0);
  }
  return total;
}

/**
 * Coordinate ascent from `prior` over a fixed grid: a weight moves only when that strictly raises the count of right
 * company and address answers on `receipts` (among equal gains, to the value nearest where it was).
 */
export function fitWeights(receipts: readonly { choices: Choice[] }[], prior: NameWeights): NameWeights {
  const w: Record<string, number> = { ...prior };
  let current = objective(receipts, w as NameWeights);
  for (let round = 0; round < 6; round += 1) {
    let moved = false;
    for (const key of NAME_FEATURES) {
      const was = w[key] ?? 0;
      let best = { value: was, score: current };
      for (const value of GRID) {
        w[key] = value;
        const score = objective(receipts, w as NameWeights);
        const nearer = Math.abs(value - was) < Math.abs(best.value - was);
        if (score > best.score || (score === best.score && best.value !== was && nearer)) best = { value, score };
      }
      w[key] = best.value;
      if (best.value !== was) moved = true;
      current = best.score;
    }
    if (!moved) break;
  }
  return w as NameWeights;
}

/** How one rule changes each receipt's count of right fields when it is switched off (negative: the rule helps). */
type RuleEffects = Map<string, Map<string, number>>;

/** The rules a fold keeps: those that make at least `RULE_MARGIN` more training merchants right than wrong. */
function rulesOffFor(effects: RuleEffects, train: Set<string>): string[] {
  const off: string[] = [];
  for (const [rule, byReceipt] of effects) {
    let net = 0;
    for (const [id, delta] of byReceipt) if (train.has(id)) net += delta < 0 ? 1 : delta > 0 ? -1 : 0;
    if (net < RULE_MARGIN) off.push(rule);
  }
  return off;
}

/** Area under the ROC curve of `confidence` separating right answers from wrong ones; NaN when one side is empty. */
export function auc(points: { confidence: number; ok: boolean }[]): number {
  const right = points.filter((p) => p.ok).map((p) => p.confidence);
  const wrong = points.filter((p) => !p.ok).map((p) => p.confidence);
  if (right.length === 0 || wrong.length === 0) return Number.NaN;
  let sum = 0;
  for (const r of right) for (const x of wrong) sum += r > x ? 1 : r === x ? 0.5 : 0;
  return sum / (right.length * wrong.length);
}

const fmt = (v: number): string => (Number.isNaN(v) ? '  n/a' : v.toFixed(3));

function fieldLine(ev: EvalModule, label: string, report: ScoreReport): string {
  const parts = ev.FIELDS.map((f) => `${f} ${fmt(report.fields[f]?.accuracy ?? 0)}`);
  return `${label.padEnd(26)} micro-F1 ${fmt(report.micro.f1)}  ${parts.join('  ')}`;
}

/**
 * The receipts of `args.data` with their truth, layout (read once, then cached) and business-name candidates, and
 * the shared evaluation script that judges them.
 */
export async function loadReceipts(
  args: Pick<Args, 'data' | 'cache' | 'engine' | 'decoder' | 'reread' | 'space' | 'spaceOnly'> &
    Partial<Pick<Args, 'head'>>,
): Promise<{ ev: EvalModule; receipts: Receipt[] }> {
  const first = args.data[0] ?? '';
  const ev = (await import(pathToFileURL(path.resolve(first, '../../tools/eval-receipts.mjs')).href)) as EvalModule;
  const receipts: Receipt[] = [];
  for (const dir of args.data) {
    const ids = fs
      .readdirSync(path.join(dir, 'truth'))
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -5))
      .sort();
    const layouts = await layoutsFor(
      {
        data: dir,
        cache: args.cache,
        ocr: 'engine',
        engine: args.engine,
        pre: 'none',
        refresh: false,
        ppocr: {
          ...(args.decoder === 'beam' ? { decoder: 'beam' } : {}),
          ...(args.reread ? { reread: args.reread } : {}),
          ...(args.space === undefined ? {} : { spaceThreshold: args.space }),
          ...(args.spaceOnly ? { wordBreaks: SPACE_PROBABILITY_ONLY } : {}),
          ...(args.head === 'receipts' ? { head: 'receipts' as const } : {}),
        },
        variant: layoutVariant(args.decoder, args.reread, args.space, args.spaceOnly, args.head),
      },
      ids,
    );
    for (const id of ids) {
      const truth = JSON.parse(fs.readFileSync(path.join(dir, 'truth', `${id}.json`), 'utf8')) as Fields;
      const layout = layouts.get(id);
      if (!layout) continue;
      const choices = issuerChoices(createLayoutIndex(layout)).map((c) => {
        const issuer = c.issuer();
        return {
          features: c.features,
          companyOk: ev.fieldCorrect('company', issuer.name?.text, truth['company']),
          addressOk: ev.fieldCorrect('address', issuer.address?.text, truth['address']),
        };
      });
      receipts.push({
        id,
        set: path.basename(dir),
        merchant: merchantOf(typeof truth['company'] === 'string' ? truth['company'] : id),
        truth,
        layout,
        choices,
      });
    }
  }
  return { ev, receipts };
}

/** The report: cross-validated and plain scores per field, confidence AUC, what each rule earns. */
export async function crossValidate(args: Args): Promise<string[]> {
  const first = args.data[0] ?? '';
  const { ev, receipts } = await loadReceipts(args);
  const truths = Object.fromEntries(receipts.map((r) => [r.id, r.truth]));
  const run = (r: Receipt, w: NameWeights, rulesOff: string[] = []): ReturnType<typeof extractFromLayout> =>
    extractFromLayout(r.layout, ev.SCHEMA, { confidence: true, nameWeights: w, rulesOff });
  const rightFields = (r: Receipt, data: Fields): number =>
    ev.FIELDS.filter((f) => ev.fieldCorrect(f, data[f], r.truth[f])).length;
  const lines: string[] = [];

  // Plain scores of each folder with the shipped weights (what the server runs).
  const started = performance.now();
  const shipped = new Map(receipts.map((r) => [r.id, run(r, NAME_WEIGHTS)]));
  const msPerReceipt = (performance.now() - started) / Math.max(1, receipts.length);
  for (const set of [...new Set(receipts.map((r) => r.set))]) {
    const ids = receipts.filter((r) => r.set === set).map((r) => r.id);
    const records = Object.fromEntries(ids.map((id) => [id, { prediction: shipped.get(id)?.data ?? {} }]));
    lines.push(fieldLine(ev, `dev ${set} (${ids.length})`, ev.score(ids, truths, records)));
  }

  // What each rule earns: every receipt's right fields with the rule off, against all rules on.
  const effects: RuleEffects = new Map();
  const ablation: string[] = [];
  const ablate = (rule: string): Map<string, number> => {
    const byReceipt = new Map<string, number>();
    const helped: string[] = [];
    const hurt: string[] = [];
    const offData = new Map<string, Fields>();
    for (const r of receipts) {
      const data = run(r, NAME_WEIGHTS, [rule]).data;
      offData.set(r.id, data);
      const delta = rightFields(r, data) - rightFields(r, shipped.get(r.id)?.data ?? {});
      if (delta !== 0) byReceipt.set(r.id, delta);
      if (delta < 0) helped.push(r.id);
      if (delta > 0) hurt.push(r.id);
    }
    // Which fields the rule makes right (+) or wrong (-) over all receipts.
    const byField = ev.FIELDS.map((f) => {
      let net = 0;
      for (const r of receipts) {
        const on = ev.fieldCorrect(f, shipped.get(r.id)?.data[f], r.truth[f]);
        const offOk = ev.fieldCorrect(f, offData.get(r.id)?.[f], r.truth[f]);
        net += (on ? 1 : 0) - (offOk ? 1 : 0);
      }
      return net === 0 ? '' : `${f} ${net > 0 ? '+' : ''}${net}`;
    }).filter(Boolean);
    if (helped.length + hurt.length > 0 || args.verbose) {
      ablation.push(
        `  ${rule.padEnd(20)} helps ${helped.length} hurts ${hurt.length}  [${byField.join(', ')}]  ${[...helped, ...hurt.map((h) => `-${h}`)].join(' ')}`,
      );
    }
    return byReceipt;
  };
  for (const rule of RULES) effects.set(rule, ablate(rule));
  // Each part of a mechanism judged alone, for the stricter cross-validation below.
  const partEffects: RuleEffects = new Map();
  const listed = ablation.length;
  for (const part of RULE_PARTS) partEffects.set(part, ablate(part));
  if (args.parts) ablation.splice(listed, 0, '  parts, one at a time:');
  else ablation.splice(listed);

  // Merchant-grouped cross-validation: per fold, the name weights and the rules on are fitted on the other folds.
  const fold = foldsOf(receipts, args.folds);
  const crossValidated = (
    ruleEffects: RuleEffects,
  ): { records: Record<string, { prediction: Fields }>; confidence: Record<string, Record<string, number>> } => {
    const records: Record<string, { prediction: Fields }> = {};
    const confidence: Record<string, Record<string, number>> = {};
    for (let k = 0; k < args.folds; k += 1) {
      const held = receipts.filter((r) => fold.get(r.merchant) === k);
      if (held.length === 0) continue;
      const train = receipts.filter((r) => fold.get(r.merchant) !== k);
      const w = fitWeights(train, PRIOR_WEIGHTS);
      const rulesOff = rulesOffFor(ruleEffects, new Set(train.map((r) => r.id)));
      if (args.verbose) {
        const moved = NAME_FEATURES.filter((f) => w[f] !== PRIOR_WEIGHTS[f]).map((f) => `${f} ${w[f]}`);
        console.error(
          `fold ${k}: ${held.length} receipts, weights moved: ${moved.join(', ') || 'none'}; rules off: ${rulesOff.join(', ')}`,
        );
      }
      for (const r of held) {
        const result = run(r, w, rulesOff);
        records[r.id] = { prediction: result.data };
        confidence[r.id] = result.confidence;
      }
    }
    return { records, confidence };
  };
  const { records, confidence } = crossValidated(effects);
  lines.push(...heldOutFolder(ev, receipts, truths, effects, run));
  const strict = crossValidated(partEffects);
  const ids = receipts.map((r) => r.id);
  const cv = ev.score(ids, truths, records);
  const merchants = new Set(receipts.map((r) => r.merchant)).size;
  lines.unshift(
    fieldLine(ev, `merchant-grouped CV (${ids.length})`, cv),
    fieldLine(ev, `  same, parts judged alone`, ev.score(ids, truths, strict.records)),
  );
  const pointsOf = (field: string): { confidence: number; ok: boolean }[] =>
    cv.receipts
      .filter((r) => confidence[r.id]?.[field] !== undefined)
      .map((r) => ({ confidence: confidence[r.id]?.[field] ?? 0, ok: r.fields[field]?.ok ?? false }));
  lines.push(`confidence AUC on the CV    ${ev.FIELDS.map((f) => `${f} ${fmt(auc(pointsOf(f)))}`).join('  ')}`);
  for (const threshold of CONFIDENCE_CUTS) {
    const parts = ev.FIELDS.map((f) => {
      const points = pointsOf(f);
      const above = points.filter((p) => p.confidence >= threshold);
      const below = points.filter((p) => p.confidence < threshold);
      const right = (ps: typeof points): string =>
        ps.length === 0 ? '  n/a' : (ps.filter((p) => p.ok).length / ps.length).toFixed(2);
      return `${f} ${above.length}/${points.length} ${right(above)} (below ${right(below)})`;
    });
    lines.push(`confidence >= ${threshold.toFixed(2)}: answers, share right  ${parts.join('  ')}`);
  }
  lines.push(
    `${receipts.length} receipts, ${merchants} merchants, ${args.folds} folds; extraction ${msPerReceipt.toFixed(1)} ms/receipt (cached OCR)`,
  );
  if (args.verbose) {
    for (const r of cv.receipts) {
      for (const [field, f] of Object.entries(r.fields)) {
        if (!f.ok) {
          console.log(`  ${r.id} ${field.padEnd(8)} pred ${JSON.stringify(f.pred)} | truth ${JSON.stringify(f.truth)}`);
        }
      }
    }
  }
  lines.push(
    'mechanisms switched off one at a time (receipts whose right fields it changes, [net right answers per field it adds]; - marks a receipt it hurts):',
  );
  lines.push(...ablation);
  const net = (rule: string): number =>
    [...(effects.get(rule)?.values() ?? [])].reduce((sum, d) => sum + (d < 0 ? 1 : d > 0 ? -1 : 0), 0);
  lines.push(`mechanisms that change no answer here: ${RULES.filter((r) => effects.get(r)?.size === 0).join(', ')}`);
  lines.push(
    `mechanisms resting on one merchant (net), so the CV credits them nothing: ${RULES.filter((r) => net(r) === 1).join(', ')}`,
  );
  if (args.fit) {
    const all = fitWeights(receipts, PRIOR_WEIGHTS);
    lines.push(`fitted on all ${receipts.length}: ${JSON.stringify(all)}`);
  }
  if (args.speed) lines.push(...(await receiptSpeed(first, ev.SCHEMA)));
  return lines;
}

/**
 * The stricter split the reading issue asks for: the name weights and the rules kept are fitted on the last data
 * folder alone (`sroie-dev2` by default) and scored on the first (`sroie-dev`), whose merchants the last folder
 * does not share. Nothing of the first folder reaches the fit, unlike the shipped weights (fitted on both).
 */
function heldOutFolder(
  ev: EvalModule,
  receipts: Receipt[],
  truths: Record<string, Fields>,
  effects: RuleEffects,
  run: (r: Receipt, w: NameWeights, rulesOff?: string[]) => ReturnType<typeof extractFromLayout>,
): string[] {
  const sets = [...new Set(receipts.map((r) => r.set))];
  const [scored, fitted] = [sets[0], sets[sets.length - 1]];
  if (sets.length < 2 || scored === undefined || fitted === undefined) return [];
  const train = receipts.filter((r) => r.set === fitted);
  const held = receipts.filter((r) => r.set === scored);
  const w = fitWeights(train, PRIOR_WEIGHTS);
  const rulesOff = rulesOffFor(effects, new Set(train.map((r) => r.id)));
  const records = Object.fromEntries(held.map((r) => [r.id, { prediction: run(r, w, rulesOff).data }]));
  const label = `fit ${fitted}, score ${scored}`;
  return [
    fieldLine(
      ev,
      label,
      ev.score(
        held.map((r) => r.id),
        truths,
        records,
      ),
    ),
  ];
}

/**
 * `npm run bench -- receipts`: the report over the cached layouts of both shared folders (read once and cached when
 * missing), or a line saying why it was skipped.
 */
export async function receiptsBenchmarks(): Promise<string[]> {
  const args = { ...parseArgs([]), speed: true };
  const missing = args.data.filter((dir) => !fs.existsSync(path.join(dir, 'truth')));
  if (missing.length > 0) return [`receipts: skipped, no SROIE folder at ${missing.join(', ')}`];
  return ['receipts (merchant-grouped cross-validation, ppocr):', ...(await crossValidate(args))];
}

async function main(): Promise<void> {
  console.log((await crossValidate(parseArgs(process.argv.slice(2)))).join('\n'));
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
