#!/usr/bin/env python3
"""glimpse-profile(5) documents exactly what the profile parser reads.

The keys come from the parser's source (session/gl-profile.c): every
"Group", "Key" pair of a known group.  Each must be documented under its
group in the man page, and every key documented there must still be read.
Every complete example in the man page must load with the real parser
(glimpse profiles --verbose), one per package family and one host profile,
and the bundled profiles listed under FILES must be those in profiles/.
TAP output."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roff  # noqa: E402
from tap import check, finish  # noqa: E402

src = os.environ.get('GLIMPSE_SRCDIR') or os.path.join(os.path.dirname(__file__), '..', '..')
glimpse = os.environ.get('GLIMPSE')

parser_c = open(os.path.join(src, 'session', 'gl-profile.c'), encoding='utf-8').read()
page = open(os.path.join(src, 'session', 'glimpse-profile.5'), encoding='utf-8').read()

m = re.search(r'known_groups\s*\[\]\s*=\s*\{([^}]*)\}', parser_c)
groups = re.findall(r'"([^"]+)"', m.group(1)) if m else []
check(len(groups) >= 5 and 'Base' in groups,
      'the parser\'s group table is found in gl-profile.c', 'groups: %s' % groups)

# "Group", "Key" as the parser passes them (get_string/get_list/fail or a table)
source_keys = {}
scanned = parser_c.replace(m.group(0), '') if m else parser_c  # not the group table itself
for g, k in re.findall(r'"(%s)"\s*,\s*"([A-Z][A-Za-z0-9]*)"' % '|'.join(map(re.escape, groups or ['-'])),
                       scanned):
    source_keys.setdefault(g, set()).add(k)
n_keys = sum(len(v) for v in source_keys.values())
# A refactoring that hides the keys from this scan must fail here, not pass vacuously.
check(n_keys >= 20 and {'Name', 'Family'} <= source_keys.get('Profile', set())
      and 'Type' in source_keys.get('Base', set()),
      'the keys the parser reads are found in gl-profile.c (%d)' % n_keys,
      'found: %s' % sorted((g, sorted(k)) for g, k in source_keys.items()))

subs = roff.sections(page, 'SS')
documented = {}
for heading, lines in subs.items():
    gm = re.match(r'^\[(\w+)\]$', heading)
    if not gm:
        continue
    keys = set()
    for i, line in enumerate(lines):
        if i > 0 and lines[i - 1].startswith('.TP'):
            km = re.match(r'^([A-Z][A-Za-z0-9]*)=', roff.words(line))
            if km:
                keys.add(km.group(1))
    documented[gm.group(1)] = keys

for g in groups:
    check(g in documented, 'glimpse-profile(5) has a section [%s]' % g)
for g, keys in sorted(source_keys.items()):
    for k in sorted(keys):
        check(k in documented.get(g, set()), 'glimpse-profile(5) documents [%s] %s=' % (g, k),
              'add a ".TP" / ".BI %s= value" entry under ".SS [%s]"' % (k, g))
for g, keys in sorted(documented.items()):
    if g == 'Tweaks':  # free-form by design: any key
        continue
    for k in sorted(keys):
        check(k in source_keys.get(g, set()),
              'documented key [%s] %s= is read by the parser' % (g, k),
              'gl-profile.c does not read it: remove it from the man page or implement it')

# The examples load with the real parser.
blocks = [b for b in roff.examples(page.splitlines())
          if b.startswith('# /etc/glimpse/profiles/') and '.profile\n' in b.splitlines(True)[0]]
check(len(blocks) >= 5, 'glimpse-profile(5) has complete examples (%d)' % len(blocks))
families, types = set(), set()
with tempfile.TemporaryDirectory() as tmp:
    for b in blocks:
        name = os.path.basename(b.splitlines()[0].split()[1])[:-len('.profile')]
        with open(os.path.join(tmp, name + '.profile'), 'w', encoding='utf-8') as f:
            f.write(b)
        fam = re.search(r'^Family=(\S+)', b, re.M)
        typ = re.search(r'^Type=(\S+)', b, re.M)
        families.add(fam.group(1) if fam else None)
        types.add(typ.group(1) if typ else None)
        if glimpse:
            env = dict(os.environ, GLIMPSE_PROFILES_PATH=tmp, LC_ALL='C.UTF-8')
            p = subprocess.run([glimpse, 'profiles', '--verbose', name], env=env,
                               capture_output=True, text=True)
            display = re.search(r'^Name=(.*)$', b, re.M).group(1)
            check(p.returncode == 0 and display in p.stdout,
                  'the example %s.profile loads with the real parser' % name,
                  (p.stdout + p.stderr).strip())
check(glimpse, 'GLIMPSE names the built glimpse (the examples are loaded with it)')
for fam in ('apt', 'dnf', 'pacman', 'apk'):
    check(fam in families, 'an example for the %s family' % fam)
for typ in ('host', 'tarball', 'bootstrap'):
    check(typ in types, 'an example with Type=%s' % typ)

# FILES lists the bundled profiles that exist.
bundled = sorted(f[:-len('.profile')] for f in os.listdir(os.path.join(src, 'profiles'))
                 if f.endswith('.profile'))
files = roff.sections(page).get('FILES', [])
listed = []
if 'The bundled profiles:' in files:
    for line in files[files.index('The bundled profiles:') + 1:]:
        if line.startswith('.TP'):
            break
        listed += [w.strip(' .') for w in roff.words(line).split(',') if w.strip(' .')]
listed.sort()
check(listed == bundled, 'FILES names every bundled profile and no other',
      'man page: %s\nprofiles/: %s' % (listed, bundled))

finish()
