/** Checks of S3's XML error answers, as the embedded storage's signed URLs give them. */
import assert from 'node:assert/strict';

/** The `<Code>` of an S3 error document. */
export function s3Code(xml: string): string | undefined {
  return /<Code>([^<]*)<\/Code>/.exec(xml)?.[1];
}

/** Asserts an S3 error answer: status, XML type, the code, a message and a request id. */
export function assertS3Error(
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
  status: number,
  code: string,
): void {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.headers['content-type'], 'application/xml');
  assert.match(res.body, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<Error><Code>/);
  assert.equal(s3Code(res.body), code);
  assert.match(res.body, /<Message>[^<]+<\/Message>/);
  assert.match(res.body, /<RequestId>[^<]+<\/RequestId><\/Error>$/);
}
