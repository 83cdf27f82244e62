/**
 * The measures the local decision engine answers from: brightness, colour, change between frames and text lines,
 * each a single pass over the shrunk frame (see frame-pixels.ts), so a frame is measured in well under a
 * millisecond and the engine keeps up with a camera.
 *
 * Text lines are found without a neural model: the frame is split into ink and background at Otsu's threshold
 * (ink is the smaller class, so light-on-dark text works too), and a pixel row is a text row when ink and
 * background alternate along it often enough but not as often as noise does, in thin strokes. Runs of text rows of a plausible
 * height are lines. This is a presence-and-count measure; reading the words is the OCR engine's job.
 */
import type { FramePixels } from './frame-pixels';

/** Mean luma as a fraction: 0 is black, 1 is white. */
export function brightness(frame: FramePixels): number {
  const { grey } = frame;
  let sum = 0;
  // An indexed loop: a typed array's iterator costs several times the addition it feeds.
  for (let i = 0; i < grey.length; i += 1) sum += grey[i] as number;
  return grey.length === 0 ? 0 : sum / grey.length / 255;
}

/** Colour names the engine knows, with a representative sRGB value each. */
export const NAMED_COLOURS: Readonly<Record<string, readonly [number, number, number]>> = {
  black: [0, 0, 0],
  white: [255, 255, 255],
  grey: [128, 128, 128],
  gray: [128, 128, 128],
  red: [220, 30, 30],
  green: [30, 170, 50],
  blue: [30, 60, 220],
  yellow: [240, 220, 30],
  orange: [245, 140, 20],
  purple: [130, 40, 170],
  pink: [245, 150, 190],
  brown: [120, 70, 30],
  cyan: [30, 200, 220],
  magenta: [220, 40, 200],
};

const COLOUR_NAMES = Object.keys(NAMED_COLOURS);
/** The named colours' sRGB values, three numbers a colour in COLOUR_NAMES order. */
const COLOUR_REFS = Int32Array.from(COLOUR_NAMES.flatMap((n) => [...(NAMED_COLOURS[n] as readonly number[])]));

/**
 * Which of `options` covers most of the frame: every pixel (on a coarse grid) takes the nearest known colour;
 * the option with the most pixels wins. Options that are not colour names never win; null when none is one.
 */
export function dominantColour(frame: FramePixels, options: readonly string[]): string | null {
  const known = options.filter((o) => NAMED_COLOURS[o.toLowerCase()] !== undefined);
  if (known.length === 0) return null;
  // Votes are counted per colour index and named once at the end (a Map keyed by name per pixel cost more than
  // the distances).
  const refs = COLOUR_REFS;
  const counts = new Uint32Array(refs.length);
  const step = Math.max(1, Math.floor(frame.width / 80));
  for (let y = 0; y < frame.height; y += step) {
    for (let x = 0; x < frame.width; x += step) {
      const p = (y * frame.width + x) * 3;
      const r = frame.rgb[p] as number;
      const g = frame.rgb[p + 1] as number;
      const b = frame.rgb[p + 2] as number;
      let best = 0;
      let bestD = Infinity;
      for (let i = 0; i < refs.length; i += 3) {
        const dr = r - (refs[i] as number);
        const dg = g - (refs[i + 1] as number);
        const db = b - (refs[i + 2] as number);
        const d = dr * dr * 2 + dg * dg * 4 + db * db * 3;
        if (d < bestD) {
          bestD = d;
          best = i / 3;
        }
      }
      counts[best] = (counts[best] as number) + 1;
    }
  }
  const votes = new Map<string, number>();
  COLOUR_NAMES.forEach((name, i) => {
    const canonical = name === 'gray' ? 'grey' : name;
    votes.set(canonical, (votes.get(canonical) ?? 0) + (counts[i] as number));
  });
  let winner: string | null = null;
  let most = -1;
  for (const option of known) {
    const key = option.toLowerCase() === 'gray' ? 'grey' : option.toLowerCase();
    const count = votes.get(key) ?? 0;
    if (count > most) {
      most = count;
      winner = option;
    }
  }
  return winner;
}

/** A coarse grey thumbnail (8 × 8 blocks of the shrunk frame, averaged) that change is measured on; robust to sensor noise. */
export interface ChangeSignature {
  cols: number;
  rows: number;
  cells: Float32Array;
}

const CELL = 8;

export function changeSignature(frame: FramePixels): ChangeSignature {
  const cols = Math.max(1, Math.floor(frame.width / CELL));
  const rows = Math.max(1, Math.floor(frame.height / CELL));
  const cells = new Float32Array(cols * rows);
  const counts = new Uint16Array(cols * rows);
  for (let y = 0; y < rows * CELL && y < frame.height; y += 1) {
    const row = Math.floor(y / CELL) * cols;
    for (let x = 0; x < cols * CELL && x < frame.width; x += 1) {
      const i = row + Math.floor(x / CELL);
      cells[i] = (cells[i] as number) + (frame.grey[y * frame.width + x] as number);
      counts[i] = (counts[i] as number) + 1;
    }
  }
  for (let i = 0; i < cells.length; i += 1) cells[i] = (cells[i] as number) / Math.max(1, counts[i] as number);
  return { cols, rows, cells };
}

/** A block counts as changed when its mean grey moved by more than this (of 255). */
const CHANGED_BLOCK = 16;

/** Fraction (0..1) of the frame's blocks that changed since `previous`; 1 when the frame size changed. */
export function changedFraction(previous: ChangeSignature, current: ChangeSignature): number {
  if (previous.cols !== current.cols || previous.rows !== current.rows) return 1;
  let changed = 0;
  for (let i = 0; i < current.cells.length; i += 1) {
    if (Math.abs((current.cells[i] as number) - (previous.cells[i] as number)) > CHANGED_BLOCK) changed += 1;
  }
  return changed / current.cells.length;
}

/** Smallest gap between the ink and background class means (of 255) for the frame to hold any text at all. */
const MIN_CONTRAST = 48;

/** Number of text lines: bands of rows where ink and background alternate like letters do. */
export function textLineCount(frame: FramePixels): number {
  const { width, height, grey } = frame;
  const histogram = greyHistogram(grey);
  const threshold = otsu(histogram, grey.length);
  if (threshold === null) return 0;
  let darkCount = 0;
  for (let v = 0; v <= threshold; v += 1) darkCount += histogram[v] as number;
  const inkIsDark = darkCount <= grey.length / 2;
  // Ink or background by grey level, looked up rather than compared per pixel.
  const inkOf = new Uint8Array(256);
  for (let v = 0; v < 256; v += 1) inkOf[v] = v <= threshold === inkIsDark ? 1 : 0;
  // Transitions per row, and whether the row holds ink at all.
  const minTransitions = Math.max(6, Math.round(width * 0.02));
  const maxTransitions = Math.round(width * 0.4);
  // Letter strokes are thin: a row whose ink comes in long runs is an edge or a shape, not writing.
  const maxMeanStroke = Math.max(8, width * 0.03);
  const isTextRow = new Uint8Array(height);
  for (let y = 0; y < height; y += 1) {
    let transitions = 0;
    let inkPixels = 0;
    let inkRuns = 0;
    const row = y * width;
    let previous = inkOf[grey[row] as number] as number;
    if (previous === 1) {
      inkPixels = 1;
      inkRuns = 1;
    }
    for (let x = 1; x < width; x += 1) {
      const ink = inkOf[grey[row + x] as number] as number;
      inkPixels += ink;
      if (ink !== previous) {
        transitions += 1;
        inkRuns += ink;
      }
      previous = ink;
    }
    const thinStrokes = inkRuns > 0 && inkPixels / inkRuns <= maxMeanStroke;
    isTextRow[y] = transitions >= minTransitions && transitions <= maxTransitions && thinStrokes ? 1 : 0;
  }
  // Runs of text rows (bridging one-row gaps) of a plausible line height.
  const minHeight = 3;
  const maxHeight = Math.max(minHeight + 1, Math.round(height / 4));
  let lines = 0;
  let y = 0;
  while (y < height) {
    if (isTextRow[y] === 0) {
      y += 1;
      continue;
    }
    let end = y;
    while (end + 1 < height && (isTextRow[end + 1] === 1 || (end + 2 < height && isTextRow[end + 2] === 1))) end += 1;
    const bandHeight = end - y + 1;
    if (bandHeight >= minHeight && bandHeight <= maxHeight) lines += 1;
    y = end + 1;
  }
  return lines;
}

/** How many pixels of a grey image have each level. */
function greyHistogram(grey: Uint8Array): Float64Array {
  const histogram = new Float64Array(256);
  for (let i = 0; i < grey.length; i += 1) {
    const v = grey[i] as number;
    histogram[v] = (histogram[v] as number) + 1;
  }
  return histogram;
}

/** Otsu's threshold of a grey image's histogram (`total` pixels), or null when its two classes are too close to hold ink. */
function otsu(histogram: Float64Array, total: number): number | null {
  let sumAll = 0;
  for (let i = 0; i < 256; i += 1) sumAll += i * (histogram[i] as number);
  let weightBelow = 0;
  let sumBelow = 0;
  let best = -1;
  let bestThreshold = 0;
  let bestGap = 0;
  for (let t = 0; t < 255; t += 1) {
    weightBelow += histogram[t] as number;
    if (weightBelow === 0) continue;
    const weightAbove = total - weightBelow;
    if (weightAbove === 0) break;
    sumBelow += t * (histogram[t] as number);
    const meanBelow = sumBelow / weightBelow;
    const meanAbove = (sumAll - sumBelow) / weightAbove;
    const between = weightBelow * weightAbove * (meanBelow - meanAbove) ** 2;
    if (between > best) {
      best = between;
      bestThreshold = t;
      bestGap = meanAbove - meanBelow;
    }
  }
  return best < 0 || bestGap < MIN_CONTRAST ? null : bestThreshold;
}
