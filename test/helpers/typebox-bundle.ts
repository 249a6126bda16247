/** Loaded by `npm test` (`--import`) before any test file, so the tests run on TypeBox as `cqs` loads it. */
import { useTypeboxBundle } from '../../src/cli/typebox-bundle.ts';

useTypeboxBundle();
