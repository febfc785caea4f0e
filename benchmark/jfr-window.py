"""Where a restart window's first 10 s went, from the benchmark's --jfr profiles (RestartWindow).

Usage: python3 benchmark/jfr-window.py PROGRESS_LOG JFR_DIR [FROM TO [SAMPLES]]
PROGRESS_LOG is the benchmark's output (its "<setup>: every node ready at HH:MM:SS" lines), JFR_DIR the results
folder's jfr/, FROM and TO the seconds after every node was ready (default 0 10). For each setup: the execution
samples of its 3 nodes in those seconds, by thread group (offline-preload-* are this provider's threads, with their
top frame), then the JVMs' CPU, collections and JIT compilation time in the same seconds. With SAMPLES (the cell's
<cell>-samples.csv.gz), last: the requests due in those seconds, their p99, and how many of them, and of those above
100 ms, were at work while any of the 3 nodes was in a collector's pause. Needs the JDK's jfr tool on the PATH.
"""
import subprocess, re, sys, glob, collections, datetime, csv, gzip
log, d = sys.argv[1], sys.argv[2]
lo, hi = (float(sys.argv[3]), float(sys.argv[4])) if len(sys.argv) > 4 else (0.0, 10.0)
samples = sys.argv[5] if len(sys.argv) > 5 else None
span = f'{lo:g}-{hi:g} s'
ready = {}
for line in open(log):
    # "<cell>, <setup>: every node ready at ..." (the cell, e.g. volatile-refresh-40rps, since the matrix of cells)
    m = re.search(r'\] (?:[\w-]+rps[\w-]*, )?(.*?): every node ready at (\d\d:\d\d:\d\d(?:\.\d+)?)', line)
    if m:
        ready[m.group(1)] = datetime.datetime.strptime(m.group(2)[:12], '%H:%M:%S.%f' if '.' in m.group(2) else '%H:%M:%S')
def recordings(setup):
    """The setup's nodes' recordings, named as RestartWindow names them."""
    return sorted(glob.glob(d + '/' + re.sub(r'[^A-Za-z0-9#=-]+', '-', 'window-' + setup) + '-node*.jfr'))
def group(t):
    if t.startswith('offline-preload'): return 'offline-preload-*'
    if t.startswith('executor-thread'): return 'executor-thread (requests)'
    if 'vert.x' in t: return 'vert.x'
    if t.startswith('jgroups') or 'jgroups' in t.lower(): return 'jgroups'
    if 'blocking' in t.lower() or 'non-blocking' in t.lower(): return 'infinispan'
    return 'other: ' + re.sub(r'[-\d]+$', '', t)[:30]
for setup, t0 in ready.items():
    tot = collections.Counter()
    for f in recordings(setup):
        out = subprocess.run(['jfr', 'print', '--events', 'jdk.ExecutionSample', f], capture_output=True, text=True).stdout
        for ev in out.split('jdk.ExecutionSample')[1:]:
            m = re.search(r'startTime = (\d\d:\d\d:\d\d\.\d+)', ev); th = re.search(r'sampledThread = "([^"]+)"', ev)
            if not m or not th: continue
            ts = datetime.datetime.strptime(m.group(1)[:12], '%H:%M:%S.%f')
            dt = (ts - t0).total_seconds()
            if lo <= dt < hi:
                tot[group(th.group(1))] += 1
                if th.group(1).startswith('offline-preload'):
                    frames = re.findall(r'\n\s+([\w.$<>]+\([^)]*\))', ev)[:3]
                    tot['  top: ' + (frames[0] if frames else '?')] += 1
    print('==', setup, sum(v for k, v in tot.items() if not k.startswith('  ')), 'samples in', span)
    for k, v in tot.most_common(25): print('   ', v, k)


# The JVMs' CPU (jdk.CPULoad, a share of the machine's CPUs each second), collections and compilations in those seconds.
# Also every collection's [start, end] in ms after ready, for the requests that met a pause (below).
CPUS = 2
pauses = {}
for setup, t0 in ready.items():
    jvm = 0.0; n = 0; gc = 0.0; gcs = 0; comp = 0.0
    pauses[setup] = []
    for f in recordings(setup):
        out = subprocess.run(['jfr', 'print', '--events', 'jdk.CPULoad,jdk.GarbageCollection,jdk.Compilation', f], capture_output=True, text=True).stdout
        for ev in re.split(r'\n(?=jdk\.)', out):
            m = re.search(r'startTime = (\d\d:\d\d:\d\d\.\d+)', ev)
            if not m: continue
            dt = (datetime.datetime.strptime(m.group(1)[:12], '%H:%M:%S.%f') - t0).total_seconds()
            if ev.startswith('jdk.GarbageCollection'):
                du = re.search(r'duration = ([\d.]+) (ms|s)', ev)
                pauses[setup].append((dt * 1000, dt * 1000 + float(du.group(1)) * (1000 if du.group(2) == 's' else 1)))
            if not (lo <= dt < hi): continue
            if ev.startswith('jdk.CPULoad'):
                u = float(re.search(r'jvmUser = ([\d.]+)%', ev).group(1)); s = float(re.search(r'jvmSystem = ([\d.]+)%', ev).group(1))
                jvm += (u + s) / 100 * CPUS; n += 1  # a share of the machine's CPUs -> cores, one sample a second
            elif ev.startswith('jdk.GarbageCollection'):
                p = re.search(r'sumOfPauses = ([\d.]+) (ms|s)', ev)
                if p: gc += float(p.group(1)) / (1 if p.group(2) == 'ms' else 0.001); gcs += 1
            elif ev.startswith('jdk.Compilation'):
                du = re.search(r'duration = ([\d.]+) (ms|s|us)', ev)
                if du: comp += float(du.group(1)) * {'ms': 1, 's': 1000, 'us': 0.001}[du.group(2)]
    print(f'{setup}: JVM CPU in {span} summed over 3 nodes ~{jvm:.1f} core-s ({n} samples), GC {gcs} collections {gc:.0f} ms pauses, JIT compilations {comp/1000:.1f} s')


# Requests that met a pause: each request's [due, due + latency] against every collection of the setup's 3 nodes.
if samples:
    rows = list(csv.DictReader(gzip.open(samples, 'rt')))
    for setup in ready:
        in_span = [p for p in pauses[setup] if p[1] > lo * 1000 and p[0] < hi * 1000]
        reqs = [(float(r['due_ms']), float(r['latency_ms'])) for r in rows
                if r['setup'] == setup and lo * 1000 <= float(r['due_ms']) < hi * 1000]
        if not reqs: continue
        met = lambda q: any(b < q[0] + q[1] and e > q[0] for b, e in in_span)
        slow = [q for q in reqs if q[1] > 100]
        lat = sorted(q[1] for q in reqs)
        print(f'{setup}: {len(in_span)} pauses on 3 nodes in {span}, longest {max((e - b for b, e in in_span), default=0):.0f} ms; '
              f'{len(reqs)} requests, p99 {lat[int(0.99 * len(lat))]:.0f} ms, {sum(map(met, reqs))} at work during a pause; '
              f'{len(slow)} above 100 ms, {sum(map(met, slow))} of them during a pause')
