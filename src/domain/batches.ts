/** Repeats a batch-limited deletion until a batch comes back short; returns the total it deleted. */
export async function deleteInBatches(
  batch: number,
  deleteSome: (limit: number) => Promise<number>,
): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await deleteSome(batch);
    total += count;
    if (count < batch) return total;
  }
}
