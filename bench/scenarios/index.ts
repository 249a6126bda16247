/** Every scenario, in the order. */
import { analysisScenario } from './analysis.ts';
import { callDetailScenario } from './call-detail.ts';
import { callsListScenario } from './calls-list.ts';
import { createEmbeddedScenario, createPostgresScenario } from './create.ts';
import { eventsFeedScenario } from './events-feed.ts';
import { firstStartScenario } from './first-start.ts';
import { growthScenario } from './growth.ts';
import { handoffScenario } from './handoff.ts';
import { handoffFullCacheScenario } from './handoff-full-cache.ts';
import { productsScenario } from './products.ts';
import { recordingScenario } from './recording.ts';
import type { Scenario } from './scenario.ts';
import { uploadScenario } from './upload.ts';
import { webhooksScenario } from './webhooks.ts';

/** The scenarios `npm run bench` runs (or `--only` picks from). */
export const SCENARIOS: Scenario[] = [
  firstStartScenario,
  productsScenario,
  createPostgresScenario,
  createEmbeddedScenario,
  handoffScenario,
  handoffFullCacheScenario,
  uploadScenario,
  growthScenario,
  analysisScenario,
  callsListScenario,
  callDetailScenario,
  recordingScenario,
  webhooksScenario,
  eventsFeedScenario,
];
