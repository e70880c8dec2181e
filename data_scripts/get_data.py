#!/usr/bin/env python3
"""Download public LIBSVM binary-classification data sets and check them.

Files come from the LIBSVM data sets site (binary section) and are stored as
``DIR/<group>/<file>``, e.g. ``data/a9a/a9a`` and ``data/rcv1/rcv1_train.binary.bz2``,
the layout that the Makefile and benchmarks expect.  ``DIR`` is ``--dir``, else
``$PEGASOS_DATA``, else ``./data``.  Only the Python standard library is used.

Downloads are resume-safe and atomic: bytes go to ``<file>.part`` (continued
with an HTTP range request if a previous run was interrupted) and the file is
renamed to its final name only after it has been checked.

Upstream checksums are not published, so each file is checked by its shape:
a small streaming counter reads it (decompressing ``.bz2`` on the fly) and
compares the number of examples ``m``, the largest feature index ``n`` and,
where known, the number of ``index:value`` pairs ``nnz`` with the table below
(figures from the LIBSVM data sets page; nnz from files checked locally).  The
sha256 of every file is printed so that a user can pin it (``sha256`` field).

``.bz2`` originals are kept compressed by default (pegasos reads ``.bz2``
directly); ``--decompress`` also writes the decompressed file next to it.

Examples::

    python data_scripts/get_data.py --list
    python data_scripts/get_data.py a9a a9a.t w8a            # into $PEGASOS_DATA or ./data
    python data_scripts/get_data.py --dir /big/disk rcv1_train.binary --decompress
    python data_scripts/get_data.py --verify-only --dir ../shared/data a9a w8a
"""

import argparse
import bz2
import collections
import hashlib
import os
import re
import shutil
import sys
import time
import urllib.error
import urllib.request

BASE_URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary"
CHUNK = 1 << 20


def _entry(name, group, remote, m, n, nnz=None, n_exact=True, sha256=None, note="",
           aliases=(), url=""):
    """One row of the data set table.

    ``n`` is the number of features given on the LIBSVM page.  With
    ``n_exact`` the largest index in the file must equal ``n``; otherwise it
    must only not exceed it (test files often miss the last features).
    ``aliases`` are other local file names accepted by ``--verify-only``.
    ``url``: "" for ``--base-url``/``remote``; a full URL for a file elsewhere;
    None when no public URL is known here (``--url NAME=URL`` gives one).
    """
    return dict(name=name, group=group, remote=remote, m=m, n=n, nnz=nnz,
                n_exact=n_exact, sha256=sha256, note=note, aliases=tuple(aliases), url=url)


#: the paper's linear sets (Sec. 7.1), T. Joachims' versions; their sizes are the paper's
_JOACHIMS = ("T. Joachims' SVM-perf version, as in the paper; no URL is known here: give --url NAME=URL "
             "(checked by shape; no checksum is published)")


#: Known files: name -> expected shape.  nnz only where a copy was counted.
DATASETS = {e["name"]: e for e in [
    _entry("a9a", "a9a", "a9a", 32561, 123, nnz=451592,
           sha256="f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906"),
    _entry("a9a.t", "a9a", "a9a.t", 16281, 123, nnz=225731, n_exact=False,
           sha256="1f448a153f0320399a7e40836eb207655b0bde0f21fc941cc472193daa9f5de9",
           note="largest index in the file is 122"),
    _entry("a8a", "a8a", "a8a", 22696, 123, nnz=314815),
    _entry("w8a", "w8a", "w8a", 49749, 300, nnz=579586,
           note="4203 examples have no features"),
    _entry("w8a.t", "w8a", "w8a.t", 14951, 300, n_exact=False),
    _entry("ijcnn1", "ijcnn1", "ijcnn1.bz2", 49990, 22, nnz=649870,
           note="= ijcnn1.tr + ijcnn1.val", aliases=["ijcnn1.trn.bz2"]),
    _entry("ijcnn1.t", "ijcnn1", "ijcnn1.t.bz2", 91701, 22, nnz=1192113, n_exact=False,
           aliases=["ijcnn1.tst.bz2"]),
    _entry("mushrooms", "mushrooms", "mushrooms", 8124, 112, nnz=170604,
           note="labels 1/2", aliases=["mushrooms.txt"]),
    _entry("rcv1_train.binary", "rcv1", "rcv1_train.binary.bz2", 20242, 47236,
           n_exact=False),
    _entry("rcv1_test.binary", "rcv1", "rcv1_test.binary.bz2", 677399, 47236,
           n_exact=False, note="about 1.2 GB decompressed"),
    _entry("real-sim", "real-sim", "real-sim.bz2", 72309, 20958, n_exact=False),
    _entry("covtype.binary", "covtype", "covtype.libsvm.binary.bz2", 581012, 54,
           n_exact=False, note="labels 1/2"),
    _entry("news20.binary", "news20", "news20.binary.bz2", 19996, 1355191,
           n_exact=False),
    # for experiments/run.py (the paper's Sec. 7): cov1 is covtype class 1 against the rest
    _entry("covtype", "covtype", "covtype.bz2", 581012, 54, n_exact=False,
           url="https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/covtype.bz2",
           note="7 classes (LIBSVM multiclass); experiments use class 1 against the rest (cov1)"),
    _entry("astro-ph", "astro-ph", "astro-ph.train", 29882, 99757, n_exact=False, url=None, note=_JOACHIMS),
    _entry("astro-ph.test", "astro-ph", "astro-ph.test", 32487, 99757, n_exact=False, url=None, note=_JOACHIMS),
    _entry("ccat", "ccat", "ccat.train", 781265, 47236, n_exact=False, url=None, note=_JOACHIMS),
    _entry("ccat.test", "ccat", "ccat.test", 23149, 47236, n_exact=False, url=None, note=_JOACHIMS),
]}

# An index:value token: digits right after whitespace (or line start), then ':'.
_INDEX_RE = re.compile(rb"(?:^|(?<=\s))(\d+):", re.M)
# The first token of a line that is not blank and not only a comment.
_LABEL_RE = re.compile(rb"^[ \t\r\f\v]*([^\s#]+)", re.M)
_COMMENT_RE = re.compile(rb"#[^\n]*")


def open_data(path, compressed=None):
    """Binary stream of a data file, decompressing bzip2 on the fly.

    ``compressed`` says whether the file is bzip2; by default the ``.bz2``
    suffix decides.
    """
    if compressed is None:
        compressed = path.endswith(".bz2")
    return bz2.open(path, "rb") if compressed else open(path, "rb")


def _count_text(text, stats):
    """Add the examples in ``text`` (whole lines only) to ``stats``."""
    if b"#" in text:
        text = _COMMENT_RE.sub(b"", text)
    stats["labels"].update(_LABEL_RE.findall(text))
    indices = [int(i) for i in _INDEX_RE.findall(text)]
    if indices:
        stats["nnz"] += len(indices)
        stats["max_index"] = max(stats["max_index"], max(indices))
        stats["min_index"] = min(stats["min_index"], min(indices))


def count_svmlight(path, compressed=None):
    """Stream through an SVMlight/LIBSVM file and count what it holds.

    Returns a dict with ``m`` (examples = non-blank lines), ``nnz``
    (``index:value`` pairs, explicit zeros included, ``qid:`` excluded),
    ``max_index``, ``min_index`` (``None`` when there are no features),
    ``labels`` (label text -> count) and ``bytes`` (uncompressed size).
    Memory use is bounded by the chunk size whatever the file size.
    ``compressed`` is passed to :func:`open_data`.
    """
    stats = dict(nnz=0, max_index=-1, min_index=float("inf"),
                 labels=collections.Counter(), bytes=0)
    rest = b""
    with open_data(path, compressed) as f:
        while True:
            chunk = f.read(8 * CHUNK)
            if not chunk:
                break
            stats["bytes"] += len(chunk)
            chunk = rest + chunk
            cut = chunk.rfind(b"\n") + 1
            rest = chunk[cut:]
            _count_text(chunk[:cut], stats)
    _count_text(rest, stats)  # last line without a final newline
    stats["labels"] = {k.decode("ascii", "replace"): v for k, v in stats["labels"].items()}
    stats["m"] = sum(stats["labels"].values())
    if stats["max_index"] < 0:
        stats["max_index"] = stats["min_index"] = None
    return stats


def sha256_file(path):
    """Hex sha256 of the file's bytes as stored (compressed bytes for ``.bz2``)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def verify(path, expected, compressed=None):
    """Check a data file against an entry of :data:`DATASETS` (or a similar dict).

    Returns ``(ok, problems, stats)``: ``problems`` is a list of messages (empty
    when ``ok``) and ``stats`` the result of :func:`count_svmlight` plus
    ``sha256``.  ``expected`` may hold ``m``, ``n``, ``n_exact``, ``nnz`` and
    ``sha256``; missing or ``None`` fields are not checked.  ``compressed``
    is passed to :func:`open_data` (for a ``.part`` file of a ``.bz2``).
    """
    try:
        stats = count_svmlight(path, compressed)
    except (OSError, EOFError, ValueError) as err:  # e.g. a truncated .bz2 stream
        stats = dict(m=None, nnz=None, max_index=None, min_index=None, labels={}, bytes=0,
                     sha256=sha256_file(path))
        return False, [f"cannot be read: {err}"], stats
    stats["sha256"] = sha256_file(path)
    problems = []
    if expected.get("m") is not None and stats["m"] != expected["m"]:
        problems.append(f"{stats['m']} examples, expected {expected['m']}")
    n = expected.get("n")
    if n is not None:
        top = stats["max_index"] or 0
        if top > n or (expected.get("n_exact", True) and top != n):
            rule = "" if expected.get("n_exact", True) else " at most"
            problems.append(f"largest index {top}, expected{rule} {n}")
    if stats["min_index"] is not None and stats["min_index"] < 1:
        problems.append(f"index {stats['min_index']} found: not 1-based")
    if expected.get("nnz") is not None and stats["nnz"] != expected["nnz"]:
        problems.append(f"{stats['nnz']} index:value pairs, expected {expected['nnz']}")
    if expected.get("sha256") and stats["sha256"] != expected["sha256"]:
        problems.append(f"sha256 {stats['sha256']}, expected {expected['sha256']}")
    return not problems, problems, stats


def download(url, dest, timeout=60, quiet=False):
    """Fetch ``url`` into ``dest`` (a ``.part`` file), resuming a partial one.

    If ``dest`` already has bytes, asks for the rest with a Range header; a
    server that answers with the whole file (200) makes it start over.
    """
    have = os.path.getsize(dest) if os.path.exists(dest) else 0
    request = urllib.request.Request(url, headers={"User-Agent": "pegasos-get-data/1"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as err:
        if err.code == 416 and have:  # nothing left to fetch: the .part is complete
            return
        raise
    with response:
        if have and response.status == 206:
            start = int(re.match(r"bytes (\d+)-", response.headers.get("Content-Range", "bytes 0-")).group(1))
            if start != have:
                raise OSError(f"server resumed at byte {start}, expected {have}")
            mode = "ab"
        else:
            have, mode = 0, "wb"
        length = response.headers.get("Content-Length")
        total = have + int(length) if length else None
        done, last = have, 0.0
        with open(dest, mode) as out:
            for block in iter(lambda: response.read(CHUNK), b""):
                out.write(block)
                done += len(block)
                if not quiet and time.monotonic() - last > 1.0:
                    last = time.monotonic()
                    size = f"/{total / 1e6:.1f}" if total else ""
                    print(f"\r  {done / 1e6:.1f}{size} MB", end="", file=sys.stderr, flush=True)
    if not quiet:
        print(f"\r  {done / 1e6:.1f} MB downloaded", file=sys.stderr)
    if total is not None and done != total:
        raise OSError(f"download of {url} stopped at {done} of {total} bytes (run again to resume)")


def decompress_bz2(src, dst):
    """Write the decompressed ``src`` to ``dst`` atomically (temp file + rename)."""
    tmp = dst + ".tmp"
    with bz2.open(src, "rb") as fin, open(tmp, "wb") as fout:
        shutil.copyfileobj(fin, fout, CHUNK)
    os.replace(tmp, dst)


def report(name, path, ok, problems, stats):
    """Print one verification result."""
    status = "OK  " if ok else "FAIL"
    print(f"{status} {name}: {path}")
    labels = stats["labels"]
    if len(labels) > 10:  # garbage or a multiclass file: do not flood the terminal
        labels = f"{len(labels)} distinct labels"
    print(f"     m={stats['m']} max_index={stats['max_index']} nnz={stats['nnz']} "
          f"labels={labels} ({stats['bytes'] / 1e6:.1f} MB of text)")
    print(f"     sha256 {stats['sha256']}")
    for p in problems:
        print(f"     problem: {p}")


def fetch(entry, root, base_url, force=False, decompress=False, quiet=False, timeout=60):
    """Download (unless present), verify and install one data set; return True if OK.

    ``timeout`` (seconds) bounds the connection and each read of the download."""
    folder = os.path.join(root, entry["group"])
    os.makedirs(folder, exist_ok=True)
    final = os.path.join(folder, entry["remote"])
    part = final + ".part"
    if force:
        for stale in (final, part):
            if os.path.exists(stale):
                os.remove(stale)
    if os.path.exists(final):
        print(f"{entry['name']}: already present, checking")
        ok, problems, stats = verify(final, entry)
    else:
        url = entry.get("url")
        if url is None:
            raise OSError(f"no public URL is known for {entry['name']}: give --url {entry['name']}=URL "
                          f"(a file of {entry['m']} examples, saved as {final})")
        url = url or f"{base_url}/{entry['remote']}"
        print(f"{entry['name']}: downloading {url}")
        download(url, part, timeout=timeout, quiet=quiet)
        ok, problems, stats = verify(part, entry, compressed=entry["remote"].endswith(".bz2"))
        if ok:
            os.replace(part, final)
        else:
            # Keep the bytes for inspection, but not under the final name.
            bad = final + ".bad"
            os.replace(part, bad)
            final = bad
    report(entry["name"], final, ok, problems, stats)
    if ok and decompress and final.endswith(".bz2"):
        plain = final[: -len(".bz2")]
        if not os.path.exists(plain) or force:
            print(f"     decompressing to {plain}")
            decompress_bz2(final, plain)
    return ok


def find_local(entry, root):
    """Path of an existing copy of ``entry`` under ``root`` (compressed or not), or None."""
    folder = os.path.join(root, entry["group"])
    remote = entry["remote"]
    candidates = [remote, remote[:-4] if remote.endswith(".bz2") else remote + ".bz2"]
    candidates += list(entry["aliases"])
    for name in candidates:
        path = os.path.join(folder, name)
        if os.path.exists(path):
            return path
    return None


def print_table():
    """The ``--list`` output."""
    print(f"{'name':<18} {'file':<34} {'m':>7} {'n':>9} {'nnz':>8}  note")
    for e in DATASETS.values():
        n = str(e["n"]) if e["n_exact"] else f"<={e['n']}"
        nnz = str(e["nnz"]) if e["nnz"] is not None else "-"
        path = e["group"] + "/" + e["remote"]
        print(f"{e['name']:<18} {path:<34} {e['m']:>7} {n:>9} {nnz:>8}  {e['note']}")


def main(argv=None):
    """Entry point."""
    p = argparse.ArgumentParser(description="Download and check LIBSVM binary data sets.")
    p.add_argument("names", nargs="*", help="data sets to fetch (default: all; see --list)")
    p.add_argument("--dir", default=os.environ.get("PEGASOS_DATA", "data"),
                   help="target directory (default $PEGASOS_DATA or ./data)")
    p.add_argument("--list", action="store_true", help="print the table of known data sets")
    p.add_argument("--decompress", action="store_true",
                   help="also write decompressed copies of .bz2 files")
    p.add_argument("--force", action="store_true", help="download again even if present")
    p.add_argument("--verify-only", action="store_true",
                   help="only check files already under --dir (no network)")
    p.add_argument("--base-url", default=BASE_URL, help="mirror of the LIBSVM binary data sets")
    p.add_argument("--url", action="append", default=[], metavar="NAME=URL",
                   help="where to download NAME from (for the sets without a known URL: astro-ph, ccat)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="network timeout of the connection and of each read (default 60)")
    args = p.parse_args(argv)
    if not args.timeout > 0:
        p.error("--timeout must be a positive number of seconds")

    if args.list:
        print_table()
        return 0
    unknown = [n for n in args.names if n not in DATASETS]
    if unknown:
        p.error(f"unknown data set(s) {', '.join(unknown)}; see --list")
    urls = {}
    for item in args.url:
        name, _, url = item.partition("=")
        if name not in DATASETS or not url:
            p.error(f"--url takes NAME=URL with a known NAME, got {item!r}")
        urls[name] = url
    entries = [DATASETS[n] for n in args.names] if args.names else [
        e for e in DATASETS.values() if e["url"] is not None or e["name"] in urls]
    entries = [dict(e, url=urls[e["name"]]) if e["name"] in urls else e for e in entries]

    failed = []
    for entry in entries:
        if args.verify_only:
            path = find_local(entry, args.dir)
            if path is None:
                print(f"MISS {entry['name']}: not under {args.dir}")
                failed.append(entry["name"])
                continue
            ok, problems, stats = verify(path, entry)
            report(entry["name"], path, ok, problems, stats)
        else:
            try:
                ok = fetch(entry, args.dir, args.base_url, args.force, args.decompress, args.quiet,
                           args.timeout)
            except (OSError, urllib.error.URLError) as err:
                print(f"FAIL {entry['name']}: {err}")
                ok = False
        if not ok:
            failed.append(entry["name"])
    if failed:
        print(f"{len(failed)} of {len(entries)} failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
