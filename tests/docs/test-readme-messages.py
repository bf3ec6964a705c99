#!/usr/bin/env python3
"""README's Troubleshooting quotes messages the programs really print.

Every message quoted at the head of a Troubleshooting entry (the
backticked spans before its " — ") must be one the C sources can print:
its text between placeholders (ID, PATH, FILE, URL, ..., and "…") must fit
a string literal of launcher/, session/ or xdg/ (adjacent literals joined)
whose %-conversions may stand for anything.  A message reworded in the code
without the README, or quoted wrongly, fails.  The README's pictures exist,
and it shows every one of tests/screenshots.  TAP output."""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import check, finish  # noqa: E402

src = os.environ.get('GLIMPSE_SRCDIR') or os.path.join(os.path.dirname(__file__), '..', '..')
PLACEHOLDERS = ('ID', 'PATH', 'FILE', 'URL', 'DIR', 'NAME', 'N', 'CMD', 'LINE', 'GROUP',
                'KEY', 'PATTERN', 'SUM', 'APP', 'USER')
WILD = '\x02'  # a placeholder of the README: anything


def c_formats():
    """Every string literal of the C sources, adjacent ones joined, %-conversions as \\x01."""
    out = []
    lit = r'"((?:[^"\\\n]|\\.)*)"'
    for path in glob.glob(os.path.join(src, '*', '*.c')):
        if os.path.basename(os.path.dirname(path)) not in ('launcher', 'session', 'xdg'):
            continue
        text = open(path, encoding='utf-8').read()
        for m in re.finditer(r'%s(?:\s*%s)*' % (lit, lit), text):
            s = ''.join(re.findall(lit, m.group(0)))
            s = s.replace('\\"', '"').replace('\\n', ' ').replace('\\t', ' ').replace('\\\\', '\\')
            s = re.sub(r'%[-+ #0-9.*]*(?:l|ll|z|h)?[a-zA-Z]', '\x01', s).replace('%%', '%')
            out.append(re.sub(r'\s+', ' ', s).strip())
    return out


# What the conversions of the code may stand for in the README: placeholders,
# and short values ("Creating a sandbox" for the %s of "%s needs root") of
# at most this many characters in all; more would let reworded text pass.
MAX_VALUES = 40


def value_ok(text):
    """Could a conversion have printed this README text?  A placeholder, or a
    value of a few words without punctuation."""
    text = text.replace(WILD, ' ')
    if not re.search(r'\w', text):  # placeholders and separators ("FILE:LINE")
        return True
    return len(text.split()) <= 3 and not re.search(r'[,;:()—"“”]', text)


def fits(run, fmt):
    """Can run be a part of some text fmt prints (\\x01 = a value)?"""
    pieces = re.sub('\x01+', '\x01', fmt).split('\x01')
    if WILD not in run and any(run in p for p in pieces):
        return True
    # quick: a literal of fmt in run, or the longest literal of run in fmt
    longest = max(run.split(WILD), key=len)
    if not (any(len(p.strip()) >= 2 and p.strip() in run for p in pieces) or
            (len(longest) >= 6 and any(longest in p for p in pieces))):
        return False
    for i in range(len(pieces)):
        for j in range(i + 1, len(pieces)):
            head = '(?:%s)' % '|'.join(re.escape(pieces[i][k:]) for k in range(len(pieces[i]) + 1))
            tail = '(?:%s)' % '|'.join(re.escape(pieces[j][:k]) for k in range(len(pieces[j]) + 1))
            rx = head + '(.*?)' + ''.join(re.escape(p) + '(.*?)' for p in pieces[i + 1:j]) + tail
            m = re.fullmatch(rx, run, re.S)
            if m and all(value_ok(g) for g in m.groups()) and \
                    sum(len(g.replace(WILD, '')) for g in m.groups()) <= MAX_VALUES:
                return True
    return False


readme = open(os.path.join(src, 'README.md'), encoding='utf-8').read()
m = re.search(r'^## Troubleshooting\n(.*?)^## ', readme, re.S | re.M)
check(m, 'README has a Troubleshooting section')
section = m.group(1) if m else ''
entries = re.findall(r'^- (.*?)(?=^- |^\*\*|\Z)', section, re.S | re.M)
check(len(entries) >= 20, 'the Troubleshooting section explains messages (%d)' % len(entries))
formats = c_formats()
check(len(formats) > 500, 'string literals read from the C sources (%d)' % len(formats))

def head_of(entry):
    """The entry up to its first ' — ' outside backticks."""
    inside = False
    for i, ch in enumerate(entry):
        if ch == '`':
            inside = not inside
        elif not inside and entry.startswith(' — ', i):
            return entry[:i]
    return entry


for entry in entries:
    head = head_of(' '.join(entry.split()))
    quoted = re.findall(r'`([^`]+)`', head, re.S)
    check(quoted, 'entry quotes a message: %s' % ' '.join(head.split())[:60])
    for q in quoted:
        q = ' '.join(q.split())
        q = re.sub(r'^glimpse[\w-]*: ', '', q)  # the program's name, which die() adds
        # "…" elides; a run ending in ":" is followed by the system's reason
        for raw in (r.strip(' :') for r in q.split('…') if r.strip(' .;:,')):
            run = re.sub(r'\b(%s)\b' % '|'.join(PLACEHOLDERS), WILD, raw)
            # (a placeholder word may be literal text too: "download URL")
            ok = any(fits(run, f) or fits(raw, f) for f in formats)
            check(ok, 'a message the code prints: %s' % raw,
                  'no string literal in launcher/, session/ or xdg/ can print it: '
                  'quote the message as the code has it')

# Every picture and file the README links to is in the tree, and every
# picture of tests/screenshots is shown (make-screenshots.sh names them).
images = re.findall(r'!\[[^\]]*\]\(([^)\s]+)\)', readme)
check(len(images) >= 3, 'README shows its screenshots (%d)' % len(images))
for img in images:
    check(os.path.isfile(os.path.join(src, img)), 'README\'s picture %s is in the tree' % img)
shots = os.path.join(src, 'tests', 'screenshots')
for png in sorted(f for f in os.listdir(shots) if f.endswith('.png')):
    check('tests/screenshots/' + png in images, 'README shows tests/screenshots/%s' % png)

finish()
