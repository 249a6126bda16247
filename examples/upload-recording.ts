/**
 * Upload a recording: creates the call, streams the file with progress, waits until it is verified.
 *   CQS_URL=… CQS_API_KEY=… CQS_AGENT=agent@example.com CQS_PRODUCT=1 node examples/upload-recording.ts call.wav
 */
import { CqsNodeClient, fileSource } from '../packages/client/src/node.ts'; // in your project: '@cqs/client/node'
import { required, usage } from './env.ts';

const path = process.argv[2];
if (!path) usage('CQS_URL=… CQS_API_KEY=… node examples/upload-recording.ts FILE');
// CqsNodeClient PUTs through node:http with backpressure (Node's fetch buffers a streamed body).
const client = new CqsNodeClient({ baseUrl: required('CQS_URL'), apiKey: required('CQS_API_KEY') });
const source = await fileSource(path);
const { status } = await client.uploadRecording(
  {
    agent_email: required('CQS_AGENT'),
    product_id: Number(required('CQS_PRODUCT')),
    filename: source.filename, // audio: the service infers the type from the extension
    body: source, // streamed from disk; retried if the PUT fails
    speaker: { separation: 'channels', channel_map: ['agent', 'customer'] }, // stereo: left agent, right customer
  },
  { onProgress: ({ sent, total }) => process.stderr.write(`${Math.round((100 * sent) / total)}%\n`) },
);
console.log(JSON.stringify(status));
if (status.status !== 'ready') process.exitCode = 1;
