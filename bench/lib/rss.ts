/** Resident memory of a process, read from /proc/<pid>/status (Linux). */
import { readFileSync } from 'node:fs';

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

/** How far a process's RSS rose above its size when the meter started (all in MB; NaN when unreadable). */
export interface RssGrowth {
  idle: number;
  peak: number;
  growth: number;
}

/** Starts measuring the RSS growth of `pid`; `stop` ends it. */
export function rssGrowthMeter(pid: number): { stop(): RssGrowth } {
  const idle = readRssMb(pid) ?? Number.NaN;
  const sampler = sampleRss(pid);
  return {
    stop() {
      const peak = sampler.stop() ?? Number.NaN;
      return { idle, peak, growth: peak - idle };
    },
  };
}
