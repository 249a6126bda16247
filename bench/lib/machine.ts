/** What the run ran on, and under which conditions, for the report. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { postgresVersion } from './postgres.ts';
import type { SettingValue } from './settings.ts';

/** The code a run measured: a checkout's commit, and whether its files differed from it. */
export interface GitState {
  /** The checkout's folder, when it is not this one (BENCH_SERVICE_DIR). */
  dir?: string;
  /** `git rev-parse HEAD`; null when it could not be read (not a git checkout). */
  commit: string | null;
  /**
   * Whether tracked files differed from the commit, or untracked files not ignored were present, apart from
   * bench/results/ (which the run itself writes); null when it could not be read.
   */
  dirty: boolean | null;
  /** The paths `git status --porcelain` named (at most 50), apart from bench/results/. */
  changed?: string[];
}

/** One scenario of a run: when it ran, how busy the machine was, and its service processes' peaks. */
export interface ScenarioRun {
  id: string;
  started: string;
  ended: string;
  /** The 1-minute load average when the scenario started and when it ended. */
  load_average_1m_start: number;
  load_average_1m_end: number;
  /**
   * Every service process the scenario started (`cqs serve`), with its highest RSS since it started
   * (VmHWM, start-up included; MB): the processes issue 16's memory bounds are judged over.
   */
  service_processes: { name: string; db: 'postgres' | 'embedded'; peak_rss_mb: number | null }[];
}

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
  /**
   * Every knob in effect, by its variable's name (settings.ts `settingsRecord`; absent in runs recorded
   * before it was kept, as the fields below).
   */
  settings?: Record<string, SettingValue>;
  /** The knobs of `settings` that were not at their defaults: a run is full only with none (history.ts). */
  settings_not_default?: string[];
  /** The code of this checkout, which ran the bench and, unless BENCH_SERVICE_DIR named another, the service. */
  git?: GitState;
  /** The code of the service, when BENCH_SERVICE_DIR named another checkout. */
  service_git?: GitState;
  /** Each scenario that ran, in order. */
  scenario_runs?: ScenarioRun[];
}

/** The 1-minute load average now. */
export const loadAverage1m = (): number => Math.round((os.loadavg()[0] ?? 0) * 100) / 100;

/** The commit of the checkout at `dir` and whether its files differ from it. */
export function gitState(dir: string): GitState {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  let commit: string | null = null;
  try {
    commit = git('rev-parse', 'HEAD').trim();
  } catch {
    return { commit: null, dirty: null };
  }
  try {
    const changed = git('status', '--porcelain')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3))
      .filter((path) => !path.startsWith('bench/results/'));
    return { commit, dirty: changed.length > 0, changed: changed.slice(0, 50) };
  } catch {
    return { commit, dirty: null };
  }
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
    load_average_1m: loadAverage1m(),
  };
}
