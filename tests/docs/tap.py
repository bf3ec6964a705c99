"""A TAP reporter for the documentation tests."""
import sys

_results = []


def check(ok, name, detail=''):
    _results.append((bool(ok), name, detail))
    return bool(ok)


def finish():
    print('1..%d' % len(_results))
    for i, (ok, name, detail) in enumerate(_results, 1):
        print('%s %d - %s' % ('ok' if ok else 'not ok', i, name))
        if not ok and detail:
            for line in str(detail).splitlines():
                print('#   ' + line)
    sys.exit(0 if all(r[0] for r in _results) else 1)
