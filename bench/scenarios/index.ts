/** Every scenario, in the order. */
import { productsScenario } from './products.ts';
import type { Scenario } from './scenario.ts';

/** The scenarios `npm run bench` runs (or `--only` picks from). */
export const SCENARIOS: Scenario[] = [productsScenario];
