/** Uploads. Every query is filtered by company. */
import type { Db } from '../database.ts';
import { uploads } from '../schema.ts';

/** An upload row. */
export type Upload = typeof uploads.$inferSelect;

/** Inserts a pending upload. */
export async function insertUpload(
  db: Db,
  values: {
    companyId: string;
    conversationUuid: string;
    filename: string;
    contentType: string;
    mediaKind: 'audio' | 'video';
    objectKey: string;
    expiresAt: Date;
  },
): Promise<Upload> {
  const [row] = await db.insert(uploads).values(values).returning();
  return row as Upload;
}
