/** A harness app listening on 127.0.0.1 (with the worker), so clients talk to it over real HTTP. */
import { type Harness, startHarness } from './harness.ts';
import { freePort } from './process.ts';

/** A listening harness and its base URL; upload URLs point at it (PUBLIC_URL). */
export async function startListening(
  backend: 'pglite' | 'postgres',
  env: Record<string, string> = {},
): Promise<{ h: Harness; baseUrl: string }> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const h = await startHarness(backend, { PUBLIC_URL: baseUrl, LOG_LEVEL: 'warn', ...env }, { worker: true });
  await h.app.listen({ port, host: '127.0.0.1' });
  return { h, baseUrl };
}
