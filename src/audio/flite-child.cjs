/*
 * The synthesis child of src/audio/tts-flite.ts (FliteTts), forked with the path of flite.wasm as
 * its argument and --expose-gc. CommonJS, and everything synchronous on purpose: this is the
 * child's whole job, and it keeps one synthesis strictly after another. Each job runs flite in a
 * fresh WASI instance against a private temp directory, and answers with the exit code, the WAV
 * (when asked for) and what flite printed.
 */
const { WASI } = require('node:wasi');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
// Compiled here, once per child, so the 21 MB compile never touches the main thread.
const module_ = new WebAssembly.Module(fs.readFileSync(process.argv[2]));
process.on('disconnect', () => process.exit(0));
process.on('message', ({ id, args, wantWav }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flite-'));
  try {
    const outFd = fs.openSync(path.join(dir, 'stdout'), 'w');
    const errFd = fs.openSync(path.join(dir, 'stderr'), 'w');
    let code;
    try {
      const wasi = new WASI({ version: 'preview1', args: ['flite', ...args], env: {}, preopens: { '/out': dir },
        stdin: 0, stdout: outFd, stderr: errFd, returnOnExit: true });
      const instance = new WebAssembly.Instance(module_, wasi.getImportObject());
      code = wasi.start(instance);
    } finally { fs.closeSync(outFd); fs.closeSync(errFd); }
    const wavPath = path.join(dir, 'out.wav');
    const wav = wantWav && fs.existsSync(wavPath) ? fs.readFileSync(wavPath) : undefined;
    const stdout = fs.readFileSync(path.join(dir, 'stdout'), 'utf8');
    const stderr = fs.readFileSync(path.join(dir, 'stderr'), 'utf8');
    const bytes = wav ? new Uint8Array(wav.buffer, wav.byteOffset, wav.byteLength) : undefined;
    process.send({ id, code, wav: bytes, stdout, stderr });
  } catch (e) {
    process.send({ id, error: String(e && e.stack || e) });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    // Destroy this WASI instance now, outside any WASI call (see the comment on FliteTts).
    global.gc();
  }
});
