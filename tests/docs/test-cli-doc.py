#!/usr/bin/env python3
"""glimpse(1) and the program's own help agree.

The commands `glimpse --help` lists must be those of the man page's
SYNOPSIS and COMMANDS, and each command's options in `glimpse COMMAND
--help` must be those in its SYNOPSIS line (long forms) and its COMMANDS
entry (short forms); the exit codes of glimpse-cli.h must be those under
EXIT STATUS.  glimpse-session and glimpse-launch: their --help options
against SYNOPSIS and OPTIONS of their man pages.  A missing option on either
side fails.  glimpse-update-helper's --help and exit statuses against
glimpse-session(1), and the D-Bus interface XML's members against its
D-BUS INTERFACE section.  Every key read from /etc/glimpse/glimpse.conf
against glimpse(1)'s FILES and the README's Settings.  TAP output."""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roff  # noqa: E402
from tap import check, finish  # noqa: E402

src = os.environ.get('GLIMPSE_SRCDIR') or os.path.join(os.path.dirname(__file__), '..', '..')
glimpse = os.environ.get('GLIMPSE')

def run(*args):
    env = dict(os.environ, LC_ALL='C.UTF-8')
    p = subprocess.run([glimpse] + list(args), env=env, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def help_commands(text):
    """The commands of `glimpse --help`: two-space indented lines under Commands:."""
    cmds, inside = [], False
    for line in text.splitlines():
        if line.startswith('Commands:'):
            inside = True
        elif inside and re.match(r'^  \S', line):
            cmds.append(line.split()[0])
        elif inside and line.strip() == '' and cmds:
            inside = False
    return cmds


def help_options(text):
    """{long: short or None} of a GOption --help, without the Help Options group."""
    opts, group = {}, None
    for line in text.splitlines():
        if re.match(r'^\S.*Options:$', line):
            group = line
            continue
        m = re.match(r'^\s+(?:-(\w), )?--([\w-]+)', line)
        if m and group and not group.startswith('Help'):
            opts[m.group(2)] = m.group(1)
    return opts


page = open(os.path.join(src, 'session', 'glimpse.1'), encoding='utf-8').read()
secs = roff.sections(page)

# SYNOPSIS: ".B glimpse NAME" or ".B sudo glimpse NAME" up to ".br"
synopsis = {}
current = None
for line in secs.get('SYNOPSIS', []):
    text = roff.words(line)
    m = re.match(r'^(?:sudo )?glimpse ([a-z][\w-]*)', text) if line.startswith('.B') else None
    if m:
        current = m.group(1)
        synopsis[current] = set()
        text = text[m.end():]
    if line.startswith('.br'):
        current = None
    elif current:
        synopsis[current] |= set(re.findall(r'--([a-z][\w-]*)', text))

# COMMANDS: ".TP" then ".B name" or ".BR name , name2"; the entry runs to the next .TP
entries = {}
lines = secs.get('COMMANDS', [])
names = []
for i, line in enumerate(lines):
    if i > 0 and lines[i - 1].startswith('.TP') and re.match(r'^\.BR? ', line):
        names = [n.strip() for n in roff.words(line).split(',') if n.strip()]
        for n in names:
            entries[n] = ''
    elif line.startswith('.TP'):
        names = []
    for n in names:
        entries[n] += roff.words(line) + '\n'

check(glimpse, 'GLIMPSE names the built glimpse')
rc, out = run('--help')
check(rc == 0, 'glimpse --help succeeds', out)
commands = help_commands(out)
check(len(commands) >= 10, 'glimpse --help lists the commands (%d)' % len(commands), out)

for c in commands:
    check(c in synopsis, 'glimpse(1) SYNOPSIS has "glimpse %s"' % c)
    check(c in entries, 'glimpse(1) COMMANDS describes %s' % c)
for c in sorted(set(synopsis) | set(entries)):
    check(c in commands, 'glimpse(1) command %s is one glimpse --help lists' % c,
          'glimpse --help lists: %s' % ' '.join(commands))

# the usage of each command as `glimpse --help` shows it
top_usage = {}
for line in out.splitlines():
    m = re.match(r'^  ([a-z][\w-]*)(?= |$)(.*)$', line)
    if m and m.group(1) in commands:
        top_usage[m.group(1)] = m.group(2)

for c in commands:
    rc, out = run(c, '--help')
    check(rc == 0, 'glimpse %s --help succeeds' % c, out)
    opts = help_options(out)
    for long in sorted(opts):
        check(('--' + long) in top_usage.get(c, ''),
              'glimpse --help shows --%s of %s' % (long, c),
              'its line: %s %s' % (c, top_usage.get(c, '')))
    man_long = synopsis.get(c, set())
    for long, short in sorted(opts.items()):
        check(long in man_long, 'glimpse(1) SYNOPSIS of %s shows --%s' % (c, long),
              'glimpse %s --help has it; add it to the SYNOPSIS line' % c)
        check(('--' + long) in entries.get(c, ''),
              'glimpse(1) COMMANDS entry of %s explains --%s' % (c, long))
        if short:
            check(re.search(r'(^|[\s(,])-%s\b' % short, entries.get(c, '')),
                  'glimpse(1) COMMANDS entry of %s gives the short form -%s of --%s' % (c, short, long))
    for long in sorted(man_long):
        check(long in opts, 'glimpse %s --help has --%s (as glimpse(1) says)' % (c, long),
              'glimpse(1) SYNOPSIS shows it, the program does not know it')

# Exit codes
cli_h = open(os.path.join(src, 'session', 'glimpse-cli.h'), encoding='utf-8').read()
codes = sorted(set(int(n) for n in re.findall(r'GL_EXIT_\w+\s*=\s*(\d+)', cli_h)))
check(len(codes) >= 5, 'the exit codes are found in glimpse-cli.h (%s)' % codes)
status_lines = secs.get('EXIT STATUS', [])
man_codes = set()
for i, line in enumerate(status_lines):
    if i > 0 and status_lines[i - 1].startswith('.TP'):
        m = re.match(r'^(\d+)$', roff.words(line).strip())
        if m:
            man_codes.add(int(m.group(1)))
for code in codes:
    check(code in man_codes, 'glimpse(1) EXIT STATUS explains %d' % code)
for code in sorted(man_codes):
    check(code in codes, 'exit status %d of glimpse(1) is one glimpse-cli.h defines' % code)

# The other programs: every option of PROGRAM --help is in its man page's
# SYNOPSIS or OPTIONS (short forms in OPTIONS), and every option there is
# one the program knows.
for var, page_path in (('GLIMPSE_SESSION', 'session/glimpse-session.1'),
                       ('GLIMPSE_LAUNCH', 'launcher/glimpse-launch.1')):
    prog = os.environ.get(var)
    name = os.path.basename(page_path)[:-2]
    if not check(prog, '%s names the built %s' % (var, name)):
        continue
    p = subprocess.run([prog, '--help'], capture_output=True, text=True,
                       env=dict(os.environ, LC_ALL='C.UTF-8'))
    text = p.stdout + p.stderr
    check(p.returncode == 0, '%s --help succeeds' % name, text)
    help_long = set(re.findall(r'(?<![\w-])--([a-z][\w-]*)', text)) - {'help'}
    help_short = {lo: sh for lo, sh in help_options(text).items() if sh}
    secs2 = roff.sections(open(os.path.join(src, page_path), encoding='utf-8').read())
    man_text = '\n'.join(roff.words(l) for l in secs2.get('SYNOPSIS', []) + secs2.get('OPTIONS', []))
    options_text = '\n'.join(roff.words(l) for l in secs2.get('OPTIONS', []))
    man_long = set(re.findall(r'(?<![\w-])--([a-z][\w-]*)', man_text)) - {'help'}
    for lo in sorted(help_long):
        check(lo in man_long, '%s(1) documents --%s' % (name, lo),
              '%s --help has it; add it to SYNOPSIS and OPTIONS' % name)
    for lo in sorted(man_long):
        check(lo in help_long, '%s --help has --%s (as %s(1) says)' % (name, lo, name))
    for lo, sh in sorted(help_short.items()):
        check(re.search(r'(^|[\s(,])-%s\b' % sh, options_text),
              '%s(1) OPTIONS gives the short form -%s of --%s' % (name, sh, lo))

# glimpse-update-helper (pkexec's program, no options of its own): --help
# prints its usage and succeeds; glimpse-session(1) documents it with the
# exit statuses the help names; a wrong argument exits 2, running nothing.
helper = os.environ.get('GLIMPSE_UPDATE_HELPER')
if check(helper, 'GLIMPSE_UPDATE_HELPER names the built glimpse-update-helper'):
    env = dict(os.environ, LC_ALL='C.UTF-8')
    p = subprocess.run([helper, '--help'], capture_output=True, text=True, env=env)
    check(p.returncode == 0 and p.stdout.startswith('Usage: glimpse-update-helper SANDBOX-ID'),
          'glimpse-update-helper --help prints its usage and succeeds', p.stdout + p.stderr)
    sess = roff.sections(open(os.path.join(src, 'session', 'glimpse-session.1'), encoding='utf-8').read())
    section = '\n'.join(roff.words(l) for l in sess.get('UPDATE HELPER', []))
    check('glimpse-update-helper' in section and 'glimpse update' in section,
          'glimpse-session(1) has an UPDATE HELPER section')
    for code in ('1', '2'):
        check(re.search(r'\b%s\b' % code, p.stdout) and re.search(r'\b%s\b' % code, section),
              'glimpse-update-helper: exit status %s in --help and glimpse-session(1)' % code)
    for args in ([], ['a', 'b'], ['-x'], ['../x']):
        p = subprocess.run([helper] + args, capture_output=True, text=True, env=env)
        check(p.returncode == 2 and p.stderr.startswith(('usage:', 'glimpse-update-helper:')),
              'glimpse-update-helper %s exits 2 with a message' % ' '.join(args), p.stdout + p.stderr)

# The helper programs glimpse and glimpse-session run (no man page of their
# own): --help prints the usage to standard output and succeeds, like the
# other tools.
for var, name in (('GLIMPSE_UPDATES_CHECK', 'glimpse-updates-check'),
                  ('GLIMPSE_PKGNS', 'glimpse-pkgns')):
    prog = os.environ.get(var)
    if not check(prog, '%s names the built %s' % (var, name)):
        continue
    p = subprocess.run([prog, '--help'], capture_output=True, text=True,
                       env=dict(os.environ, LC_ALL='C.UTF-8'))
    check(p.returncode == 0 and p.stdout.startswith('Usage: %s ' % name) and p.stderr == '',
          '%s --help prints its usage to stdout and succeeds' % name,
          'exit %d\nstdout: %s\nstderr: %s' % (p.returncode, p.stdout, p.stderr))

# The D-Bus interface: every method, signal and property of the installed
# XML is described under D-BUS INTERFACE of glimpse-session(1), and the
# man page names none the XML lacks.
import xml.etree.ElementTree as ET  # noqa: E402
iface = ET.parse(os.path.join(src, 'session', 'data', 'org.glimpse.Session1.xml')).getroot().find('interface')
members = {e.get('name') for e in iface if e.tag in ('method', 'signal', 'property')}
check(len(members) >= 7, 'the interface XML has its members (%d)' % len(members))
dbus_sec = roff.sections(open(os.path.join(src, 'session', 'glimpse-session.1'),
                              encoding='utf-8').read()).get('D-BUS INTERFACE', [])
dbus_text = '\n'.join(roff.words(l) for l in dbus_sec)
man_members = set()
for i, line in enumerate(dbus_sec):
    if i > 0 and dbus_sec[i - 1].startswith('.TP'):
        man_members |= set(re.findall(r'\b([A-Z][A-Za-z]+)\b(?= \(|,|$)', roff.words(line)))
for m in sorted(members):
    check(re.search(r'\b%s\b' % m, dbus_text), 'glimpse-session(1) D-BUS INTERFACE describes %s' % m)
for m in sorted(man_members - members):
    check(False, 'glimpse-session(1) D-BUS INTERFACE names %s, which the XML has' % m)

# /etc/glimpse/glimpse.conf: every key the sources read from it is explained
# in glimpse(1)'s FILES and in the README's Settings.
conf_keys = set()
for path in glob.glob(os.path.join(src, 'session', '*.c')):
    text = open(path, encoding='utf-8').read()
    if '/etc/glimpse/glimpse.conf' not in text and 'gl_paths_config_file' not in text:
        continue
    conf_keys |= {k for _, k in re.findall(r'g_key_file_get_\w+\s*\(\s*\w+,\s*"(\w+)",\s*"(\w+)"', text)}
    conf_keys |= set(re.findall(r'\bsetting\s*\(\s*"GLIMPSE_\w+",\s*"(\w+)"', text))
    # a table of settings: { "Key", G_STRUCT_OFFSET (…), default }
    conf_keys |= set(re.findall(r'\{\s*"([A-Z]\w+)",\s*G_STRUCT_OFFSET', text))
check(len(conf_keys) >= 3, 'the keys read from glimpse.conf are found (%s)' % sorted(conf_keys))
files_text = '\n'.join(roff.words(l) for l in secs.get('FILES', []))
readme = open(os.path.join(src, 'README.md'), encoding='utf-8').read()
settings = readme.split('## Settings', 1)[-1].split('\n## ', 1)[0]
for k in sorted(conf_keys):
    check(re.search(r'\b%s=' % k, files_text), 'glimpse(1) FILES explains glimpse.conf\'s %s=' % k)
    check(re.search(r'\b%s=' % k, settings), 'README Settings explains glimpse.conf\'s %s=' % k)

finish()
