/** S3 failures as logs and tests see them (no SDK import: loaded whether or not a bucket is configured). */

/** An S3 error as a log line may show it: what failed and how, never a header or a credential. */
export function describeS3Error(err: unknown): { error: string; status?: number; code?: string } {
  const e = err as { name?: string; message?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  return {
    error: String(e?.message ?? err).slice(0, 300),
    ...(e?.$metadata?.httpStatusCode !== undefined ? { status: e.$metadata.httpStatusCode } : {}),
    ...(e?.name || e?.code ? { code: e.code ?? e.name } : {}),
  };
}
