-- A call's analysis figures are stored as json, the text as the service wrote it, instead of jsonb (issue 16),
-- as the transcript is since 0019: the service never looks inside them in SQL, and GET one call now writes
-- that text into its answer as it is. A 1,000-segment call's figures (51 kB of text, most of it `speech`)
-- were written out of jsonb by PostgreSQL, parsed by the service into 1,000 objects and serialized again at
-- every read: a third of the V8 heap a call read allocated (326 kB of 934 kB). Figures stored before keep
-- jsonb's spacing and key order as their text; their values are the same.
ALTER TABLE "call_analyses" ALTER COLUMN "figures" SET DATA TYPE json;
