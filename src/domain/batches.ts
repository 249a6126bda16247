/** Rows a purge deletes per statement, so that one purge never holds many row locks at once. */
const PURGE_BATCH = 5000;

/** Repeats a batch-limited deletion until a batch comes back short; returns the total it deleted. */
export async function deleteInBatches(deleteSome: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await deleteSome(PURGE_BATCH);
    total += count;
    if (count < PURGE_BATCH) return total;
  }
}
