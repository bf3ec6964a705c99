"""Just enough man(7) reading for the documentation tests: sections,
subsections and the text of font and escape requests."""
import re

_ESCAPES = [
    (r'\(lq', '"'), (r'\(rq', '"'), (r'\(rs', '\\'), (r'\(em', '-'),
    (r'\(en', '-'), (r'\-', '-'), (r'\&', ''), (r'\e', '\\'), (r'\ ', ' '),
]


def unescape(text):
    """The characters a reader sees for a roff text fragment."""
    text = re.sub(r'\\f[BIRP]', '', text)
    for esc, plain in _ESCAPES:
        text = text.replace(esc, plain)
    return text


def words(line):
    """The words of a font request line (.B, .BR, .BI, ...), unquoted and
    joined as they are printed; other lines are returned unescaped."""
    m = re.match(r'^\.(B|I|BR|RB|BI|IB|RI|IR)\s+(.*)$', line)
    if not m:
        return unescape(line)
    parts = re.findall(r'"([^"]*)"|(\S+)', m.group(2))
    joined = ''.join(a if a else b for a, b in parts)
    if m.group(1) in ('B', 'I'):
        joined = ' '.join(a if a else b for a, b in parts)
    return unescape(joined)


def sections(text, level='SH'):
    """{heading: [lines]} for every .SH (or .SS) heading, in order."""
    out = {}
    current = None
    for line in text.splitlines():
        m = re.match(r'^\.%s\s+(.*)$' % level, line)
        if m:
            current = unescape(m.group(1).strip('"'))
            out[current] = []
        elif level == 'SS' and line.startswith('.SH'):
            current = None
        elif current is not None:
            out[current].append(line)
    return out


def examples(lines):
    """The text of every .EX ... .EE block in lines."""
    blocks, block = [], None
    for line in lines:
        if line.startswith('.EX'):
            block = []
        elif line.startswith('.EE'):
            blocks.append('\n'.join(block) + '\n')
            block = None
        elif block is not None:
            block.append(unescape(line))
    return blocks
