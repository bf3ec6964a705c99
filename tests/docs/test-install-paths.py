#!/usr/bin/env python3
"""What `ninja install` puts in place is where its readers look.

polkit reads its actions from one directory of its own whatever Glimpse's
prefix (Debian 12: /usr/share/polkit-1/actions; polkit-gobject-1's
policydir where that is installed): the README's install (prefix
/usr/local) must put the policy of "Update now" there, and the policy must
name the helper where it is installed, or pkexec refuses to run it.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import check, finish  # noqa: E402

build = os.environ['GLIMPSE_BUILDDIR']
with open(os.path.join(build, 'meson-info', 'intro-installed.json'), encoding='utf-8') as f:
    installed = json.load(f)
with open(os.path.join(build, 'meson-info', 'intro-buildoptions.json'), encoding='utf-8') as f:
    options = {o['name']: o['value'] for o in json.load(f)}


def installed_as(name):
    return {src: dest for src, dest in installed.items() if os.path.basename(dest) == name}


policies = installed_as('org.glimpse.update.policy')
helpers = installed_as('glimpse-update-helper')
check(len(policies) == 1, 'the polkit policy is installed', policies)
check(len(helpers) == 1, 'glimpse-update-helper is installed', helpers)

p = subprocess.run(['pkg-config', '--variable=policydir', 'polkit-gobject-1'],
                   capture_output=True, text=True)
polkit_dir = p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else '/usr/share/polkit-1/actions'
for src, dest in policies.items():
    if options.get('polkit_policydir'):
        print('# -Dpolkit_policydir=%s: not checked against polkit\'s directory' % options['polkit_policydir'])
    else:
        check(os.path.dirname(dest) == polkit_dir,
              'the policy goes where polkit reads actions (%s)' % polkit_dir,
              'installed as %s (prefix %s)' % (dest, options.get('prefix')))
    with open(src, encoding='utf-8') as f:
        text = f.read()
    m = re.search(r'<annotate key="org.freedesktop.policykit.exec.path">([^<]*)</annotate>', text)
    check(m and m.group(1) in helpers.values(),
          'the policy names the helper where it is installed',
          'exec.path %s, helper at %s' % (m.group(1) if m else None, list(helpers.values())))
finish()
