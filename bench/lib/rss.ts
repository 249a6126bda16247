/** Resident memory of a process, read from /proc/<pid>/status (Linux). */
import { readFileSync, writeFileSync } from 'node:fs';
import type { DbKind } from './settings.ts';

function readStatusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1];
    return kb === undefined ? undefined : (Number(kb) * 1024) / 1e6;
  } catch {
    return undefined;
  }
}

/** The process's VmRSS in MB (10^6 bytes), or undefined when it cannot be read. */
export function readRssMb(pid: number): number | undefined {
  return readStatusMb(pid, 'VmRSS');
}

/** The highest VmRSS of the process since it started (VmHWM, so start-up included), in MB. */
export function readPeakRssMb(pid: number): number | undefined {
  return readStatusMb(pid, 'VmHWM');
}

/** A running sampler; `stop` ends it and returns the peak seen (MB), or undefined when none was read. */
export interface RssSampler {
  stop(): number | undefined;
}

/**
 * Samples the process's VmRSS (or VmHWM, whose last read before a short-lived process exits stands for its
 * peak) every `intervalMs` until stopped.
 */
export function sampleRss(pid: number, intervalMs = 100, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): RssSampler {
  let peak: number | undefined;
  const take = () => {
    const mb = readStatusMb(pid, field);
    if (mb !== undefined && (peak === undefined || mb > peak)) peak = mb;
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return peak;
    },
  };
}

/**
 * Resets the process's VmHWM to its present RSS (`5` written to /proc/<pid>/clear_refs, Linux 4.0 on);
 * answers whether it could. Whoever needs the peak since the process started reads it before.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** How far a process's RSS rose above its size when the meter started (all in MB; NaN when unreadable). */
export interface RssGrowth {
  idle: number;
  peak: number;
  growth: number;
  /** How the peak was read: the kernel's VmHWM since the meter reset it, or VmRSS sampled every 100 ms. */
  how: 'VmHWM' | 'sampled';
}

/**
 * Starts measuring the RSS growth of `pid`; `stop` ends it. Where /proc allows it, the peak is the true one:
 * the process's VmHWM is reset when the meter starts and read when it stops (a service's peak since its
 * start is noted first, for its scenario's record). Otherwise VmRSS is sampled every 100 ms, which misses
 * a spike shorter than that. The samples are kept either way (the higher of the two is the peak).
 */
export function rssGrowthMeter(pid: number): { stop(): RssGrowth } {
  noteServicePeak(pid);
  const idle = readRssMb(pid) ?? Number.NaN;
  const reset = resetPeakRss(pid);
  const sampler = sampleRss(pid);
  return {
    stop() {
      const sampled = sampler.stop();
      const hwm = reset ? readPeakRssMb(pid) : undefined;
      const reads = [sampled, hwm].filter((mb): mb is number => mb !== undefined);
      const peak = reads.length === 0 ? Number.NaN : Math.max(...reads);
      return { idle, peak, growth: peak - idle, how: hwm === undefined ? 'sampled' : 'VmHWM' };
    },
  };
}

/** A service process a scenario started, and the highest VmHWM read of it (start-up included; MB). */
export interface ServicePeak {
  name: string;
  pid: number;
  db: DbKind;
  peakMb: number | undefined;
}

const tracked = new Map<number, ServicePeak>();

/** Tracks a service process of the running scenario (see takeServicePeaks). */
export function trackServiceProcess(pid: number, name: string, db: DbKind): void {
  tracked.set(pid, { name, pid, db, peakMb: readPeakRssMb(pid) });
}

/**
 * Reads the VmHWM of a tracked process and keeps the highest read. VmHWM only grows, so a read just before
 * the process stops is its peak, unless something reset it (rssGrowthMeter reads it before it does).
 */
export function noteServicePeak(pid: number): void {
  const process = tracked.get(pid);
  if (!process) return;
  const mb = readPeakRssMb(pid);
  if (mb !== undefined && (process.peakMb === undefined || mb > process.peakMb)) process.peakMb = mb;
}

/** The peaks of every service process tracked since the last call (those still running read now). */
export function takeServicePeaks(): ServicePeak[] {
  for (const pid of tracked.keys()) noteServicePeak(pid);
  const out = [...tracked.values()];
  tracked.clear();
  return out;
}
