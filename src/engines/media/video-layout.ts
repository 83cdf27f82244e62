/**
 * Turns sampled video frames into a DocumentLayout by OCR, one page per frame that shows something new.
 *
 * A slide or a caption usually stays on screen for many samples; feeding each copy to field extraction would repeat
 * every value. So a frame whose recognised text equals the previous kept frame's is dropped, and each kept page keeps
 * the time (`timeS`) at which its text first appeared.
 *
 * Frames are read one after another; once the work signal (lib/work-tenant.ts) aborts, no further frame is started
 * and the call rejects with `WorkCancelledError` (a cancelled frame is not an error page).
 */
import { isCancellation, throwIfCancelled, WorkCancelledError } from '../../lib/cancel';
import { currentWorkSignal } from '../../lib/work-tenant';
import type { LayoutPage } from '../types';
import type { FrameRecognizer, VideoFrame } from './types';

/** OCRs `frames` in order and returns one page per change of text; a frame whose OCR throws becomes an `error` page
 * (kept, never merged), so one bad frame does not sink the video. */
export async function framesToLayout(frames: readonly VideoFrame[], ocr: FrameRecognizer): Promise<LayoutPage[]> {
  const pages: LayoutPage[] = [];
  let previousText: string | null = null;
  const signal = currentWorkSignal();
  for (const frame of frames) {
    throwIfCancelled(signal);
    let page: LayoutPage;
    try {
      page = await ocr.recognize(frame.png);
    } catch (error) {
      if (isCancellation(error, signal)) throw new WorkCancelledError();
      pages.push(errorPage(frame, pages.length));
      continue;
    }
    if (page.status === 'ok') {
      const text = normalisedText(page);
      if (text === previousText) continue;
      previousText = text;
    }
    pages.push({ ...page, index: pages.length, timeS: frame.timeS });
  }
  return pages;
}

/** The page's words joined by single spaces, the comparison key for "same text as before". */
export function normalisedText(page: LayoutPage): string {
  return page.lines
    .map((l) => l.text)
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function errorPage(frame: VideoFrame, index: number): LayoutPage {
  return {
    index,
    width: frame.width,
    height: frame.height,
    source: 'ocr',
    lines: [],
    status: 'error',
    error: `OCR failed for the frame at ${frame.timeS} s`,
    timeS: frame.timeS,
  };
}
