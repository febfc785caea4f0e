"""Two setups of one restart-window cell compared window by window, from the cell's stored requests.

Usage: python3 benchmark/pooled-pair.py SAMPLES_CSV_GZ REFERENCE CANDIDATE [SKIP_REPEATS]
SAMPLES_CSV_GZ is a cell's <cell>-samples.csv.gz (RestartWindow), REFERENCE and CANDIDATE the beginnings of two
setups' names there (e.g. "with this provider, preloading=false" and "with this provider, defaults"), SKIP_REPEATS
a comma-separated list of repeat numbers to leave out (e.g. 1). The benchmark's own pooled table compares every setup
with stock; this compares any two, the same way (PooledComparison): each setup's successful requests of a window
pooled over its restarts, a bootstrap resampling the restarts, then the requests within each, and the 90% interval of
the candidate's p99 minus the reference's; "no worse" when all of it is within 10% of the reference's pooled p99 or
50 ms, "worse" when all of it is above, else "not decided".
"""
import collections, csv, gzip, random, sys

path, reference, candidate = sys.argv[1], sys.argv[2], sys.argv[3]
skip = set(sys.argv[4].split(',')) if len(sys.argv) > 4 else set()
RESAMPLES, WINDOW_MS = 2000, 10_000

runs = collections.defaultdict(lambda: collections.defaultdict(list))
for row in csv.DictReader(gzip.open(path, 'rt')):
    if row['failed'] != 'true':
        runs[row['setup']][int(float(row['due_ms']) // WINDOW_MS)].append(float(row['latency_ms']))

def p99(latencies):
    ordered = sorted(latencies)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else float('nan')

def setup(prefix):
    chosen = [name for name in runs if name.startswith(prefix) and name.rsplit('#', 1)[-1] not in skip]
    if not chosen:
        sys.exit(f'no setup in {path} begins with "{prefix}"')
    return chosen

def resample(names, window, rnd):
    pooled = []
    for _ in names:
        run = runs[rnd.choice(names)][window]
        pooled += [rnd.choice(run) for _ in run]
    return pooled

ref, cand = setup(reference), setup(candidate)
rnd = random.Random(42)
print(f'reference: {", ".join(ref)}\ncandidate: {", ".join(cand)}')
verdicts = collections.Counter()
for w in range(max(max(runs[n]) for n in ref + cand) + 1):
    ref_p99 = p99([x for n in ref for x in runs[n][w]])
    cand_p99 = p99([x for n in cand for x in runs[n][w]])
    diffs = sorted(p99(resample(cand, w, rnd)) - p99(resample(ref, w, rnd)) for _ in range(RESAMPLES))
    low, high = diffs[int(0.05 * RESAMPLES)], diffs[int(0.95 * RESAMPLES) - 1]
    tolerance = max(0.1 * ref_p99, 50)
    verdict = 'no worse' if high <= tolerance else 'worse' if low > tolerance else 'not decided'
    verdicts[verdict] += 1
    print(f'{w * 10:3d}-{w * 10 + 10:<3d} s  reference p99 {ref_p99:8.0f} ms  candidate {cand_p99:8.0f} ms  '
          f'difference (90%) {low:+8.0f} to {high:+8.0f} ms  {verdict}')
print(', '.join(f'{n} {v}' for v, n in verdicts.items()))
