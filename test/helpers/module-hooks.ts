/**
 * Loaded by `npm test` (`--import`) before any test file, so the tests load TypeBox and drizzle-orm as `cqs`
 * does (src/cli/main.ts): TypeBox from its bundle, drizzle-orm's modules without the package-scope look-up.
 */
import { useDrizzleResolve } from '../../src/cli/drizzle-resolve.ts';
import { useTypeboxBundle } from '../../src/cli/typebox-bundle.ts';

useTypeboxBundle();
useDrizzleResolve();
