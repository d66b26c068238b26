#!/usr/bin/env bash
# The documentation guard: a page moved or a section renamed leaves links
# and comments pointing nowhere, and nothing else notices.
#
# Checks, over docs/ (and README.md, tests/README.md):
#   - every page says under its title, in one italic line, what it is:
#     *Guide...*, *Reference...* or (docs/design/) *Design note...*;
#   - every relative link resolves to a file, and its #anchor to a heading
#     of that file (GitHub's rule: lower case, punctuation dropped, blanks
#     as '-');
#   - every docs/NAME.md path named in the code, scripts, tests and docs
#     exists;
#   - no page refers to a document outside the repository.
# Prints one line per problem; exits 1 when there is any.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2

python3 - <<'EOF'
import os, re, subprocess, sys

pages = sorted(os.path.join(d, f) for d, _, fs in os.walk('docs') for f in fs if f.endswith('.md'))
pages += ['README.md', 'tests/README.md']
bad = []

def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')

def anchors(path):
    out, fence = set(), False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            fence = not fence
        elif not fence and line.startswith('#'):
            out.add(slug(line.lstrip('#')))
    return out

for p in pages:
    text = open(p, encoding='utf-8').read()
    lines = text.split('\n')
    if p.startswith('docs/'):
        if not lines[0].startswith('# '):
            bad.append(f'{p}:1: the page does not start with its title')
        else:
            first = next((l for l in lines[1:] if l.strip()), '')
            kinds = ('*Design note',) if p.startswith('docs/design/') else ('*Guide', '*Reference')
            if not first.startswith(kinds):
                bad.append(f'{p}: no italic "{kinds[0][1:]}..." line under the title')
    fence = False
    for line, l in enumerate(lines, 1):
        if l.startswith('```'):
            fence = not fence
        if fence:
            continue
        for m in re.finditer(r'\]\(([^)\s]+)\)', l):
            target = m.group(1)
            if re.match(r'[a-z]+:', target):
                continue
            path, _, frag = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(p), path)) if path else p
            if not os.path.exists(dest):
                bad.append(f'{p}:{line}: link to {target}: no such file')
            elif frag and dest.endswith('.md') and frag not in anchors(dest):
                bad.append(f'{p}:{line}: link to {target}: no such heading')
    for m in re.finditer(r'\bSPEC\b|\bshared/|V8-FORMATS|ANCHORS|STYLE\.md', text):
        line = text[:m.start()].count('\n') + 1
        bad.append(f'{p}:{line}: refers to a document outside the repository ({m.group(0)})')

# docs/NAME.md paths named anywhere in the sources
files = subprocess.run(['git', 'ls-files', '-co', '--exclude-standard'], capture_output=True,
                       text=True).stdout.split()
for f in files:
    if f == 'tests/check_docs.sh' or f.startswith(('.deps', 'build/', 'tests/fuzz/corpus/')) \
            or not os.path.isfile(f):
        continue
    if not re.search(r'\.(c|h|sh|js|py|md|in)$|(^|/)Makefile$', f):
        continue
    try:
        text = open(f, encoding='utf-8').read()
    except UnicodeDecodeError:
        continue
    for m in re.finditer(r'(?<![\w./-])docs/[\w./-]*?\.md\b', text):
        if not os.path.exists(m.group(0)):
            line = text[:m.start()].count('\n') + 1
            bad.append(f'{f}:{line}: names {m.group(0)}, which does not exist')

for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
