/**
 * A reader of stdout or stderr that goes away (`ddb-spread ... --json | head -1`, `| true`) must not
 * decide the fate of the load. Node ignores SIGPIPE, so a write to a closed pipe fails
 * with EPIPE as an 'error' event on the stream, which kills the process when nobody listens. With this
 * listener the error ends that stream only: later writes to it are dropped (a destroyed stream ignores
 * them), and the load goes on to the end with its own exit code.
 */
const guarded = new WeakSet<object>();

/** Swallows write errors (EPIPE and the like) of an output stream, once per stream. */
export function ignoreClosedPipe(stream: NodeJS.WritableStream): void {
  if (guarded.has(stream) || typeof stream.on !== 'function') return;
  guarded.add(stream);
  stream.on('error', () => {
    // Nothing to tell: the only place to say it is the stream that just failed, or its twin whose
    // reader may be gone as well. The reject file, the checkpoint and the exit code carry the outcome.
    (stream as { destroy?: () => void }).destroy?.();
  });
}
