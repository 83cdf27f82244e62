/**
 * The child-process runner: no shell, a deadline, a stdout cap, stdin piping and line-wise stderr.
 */
import { runTool, ToolRunError } from '../../../../src/engines/media/run-tool';
import { encodeWav, mediaTools, tonePcm } from '../../../helpers/media-clips';

const quiet = ['-nostdin', '-hide_banner', '-loglevel', 'error'];

describe('runTool', () => {
  it('pipes stdin and returns stdout', async () => {
    const wav = encodeWav(tonePcm(0.5, 440, 8000), 8000);
    const { stdout } = await runTool(mediaTools.ffmpeg, [...quiet, '-i', 'pipe:0', '-f', 's16le', 'pipe:1'], {
      stdin: wav,
      timeoutMs: 20_000,
      maxStdoutBytes: 1024 * 1024,
    });
    expect(stdout.length).toBe(4000 * 2);
  });

  it('kills a run that outlives its deadline', async () => {
    const args = [...quiet, '-re', '-f', 'lavfi', '-i', 'sine=d=30', '-f', 'null', '-'];
    await expect(runTool(mediaTools.ffmpeg, args, { timeoutMs: 300, maxStdoutBytes: 1024 })).rejects.toMatchObject({
      reason: 'timeout',
    });
  });

  it('kills a run whose output passes the cap', async () => {
    const args = [...quiet, '-f', 'lavfi', '-i', 'sine=d=60', '-f', 's16le', 'pipe:1'];
    await expect(runTool(mediaTools.ffmpeg, args, { timeoutMs: 20_000, maxStdoutBytes: 10_000 })).rejects.toMatchObject(
      { reason: 'output-limit' },
    );
  });

  it('reports exit codes with the stderr tail, and unstartable binaries as spawn failures', async () => {
    const exit = await runTool(mediaTools.ffmpeg, [...quiet, '-i', '/nonexistent/file.mp4'], {
      timeoutMs: 20_000,
      maxStdoutBytes: 1024,
    }).catch((e: unknown) => e);
    expect(exit).toBeInstanceOf(ToolRunError);
    expect(exit).toMatchObject({
      reason: 'exit',
      exitCode: 1,
      stderrTail: expect.stringMatching(/No such file/) as unknown,
    });
    await expect(runTool('/nonexistent/ffmpeg', [], { timeoutMs: 1000, maxStdoutBytes: 1024 })).rejects.toMatchObject({
      reason: 'spawn',
    });
  });

  it('passes arguments verbatim, never through a shell', async () => {
    const lines: string[] = [];
    await runTool(mediaTools.ffmpeg, [...quiet, '-i', '$(touch /tmp/pwned); `id`'], {
      timeoutMs: 20_000,
      maxStdoutBytes: 1024,
      onStderrLine: (l) => lines.push(l),
    }).catch(() => undefined);
    expect(lines.join('\n')).toContain('$(touch /tmp/pwned); `id`');
  });
});
