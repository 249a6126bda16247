/** What the run ran on, for the report. */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { postgresVersion } from './postgres.ts';

/** The `machine` object of the report. */
export interface MachineInfo {
  cpu_model: string;
  cores: number;
  memory_gb: number;
  node_version: string;
  os: string;
  postgres_version: string | null;
  date: string;
  /** The 1-minute load average when the run started: the machine may be shared, and this says how busy it was. */
  load_average_1m: number;
  /**
   * The ids of the run's `--only`, null when it ran every scenario (absent in runs recorded before it was
   * kept). A fact of the run, not the machine, kept here so that latest.json keeps its agreed top-level shape.
   */
  only_scenarios?: string[] | null;
}

function osName(): string {
  try {
    const pretty = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1];
    if (pretty) return `${pretty} (${os.type()} ${os.release()} ${os.arch()})`;
  } catch {
    // not Linux, or no os-release
  }
  return `${os.type()} ${os.release()} ${os.arch()}`;
}

/** Describes this machine; the PostgreSQL version is read from the server at `postgresUrl`. */
export async function describeMachine(postgresUrl: string): Promise<MachineInfo> {
  const cpus = os.cpus();
  return {
    cpu_model: cpus[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    memory_gb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node_version: process.version,
    os: osName(),
    postgres_version: (await postgresVersion(postgresUrl)) ?? null,
    date: new Date().toISOString(),
    load_average_1m: Math.round((os.loadavg()[0] ?? 0) * 100) / 100,
  };
}
