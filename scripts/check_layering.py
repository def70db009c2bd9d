#!/usr/bin/python3
"""Checks that every #include follows the module graph declared in CMake.

strata's modules declare their dependencies in their own CMakeLists.txt
(`strata_module(NAME SOURCES ... DEPS ... TESTS ...)`, plus the plain
add_library/add_executable targets of src/server, client/ and bench/). CMake
can only enforce part of that graph (see cmake/strata_module.cmake); this
script checks all of it, reading the CMakeLists and the sources as text
(stdlib only, well under a second).

Rules (docs: the comment above the modules in the top CMakeLists.txt):

  modules   Production code of a target may include headers of its own
            target and of the targets it names DIRECTLY (DEPS, or
            target_link_libraries). A dependency of a dependency is not enough:
            a module that uses meta/ must say so, even if object/ already
            pulls it in. This is "give each module only the include roots of
            the modules it declares".
  tests     Test code (files listed under TESTS or STRATA_TEST_SOURCES, and any
            *_test.cc, *_fuzz.cc, *_test_util.h) may include its module, the
            transitive closure of its module's dependencies (a test builds its
            fixture from the layers below: kvcache tests construct an object
            engine over a plain data store), and the test twins' modules
            TEST_EXTRA_MODULES (io: mem_fs/fault_fs, meta: mem_store). Never a
            module above its own. GoogleTest only here.
  test-only *_test_util.h headers may be included only by test code.
  external  A third-party header (EXTERNAL_HEADERS) needs its CMake target
            declared directly by the including target (tests: anywhere in the
            closure). Getting OpenSSL through common's PUBLIC link is not
            declaring it.
  private   Headers in PRIVATE_HEADERS belong to their module's inside.
  narrow    NARROW_EDGES: declared edges that may be used only through the
            named headers (production code; tests may build fixtures freely).
  public    Headers under include/ (the installed client API) may include only
            include/ headers and system headers.

Violations already in the tree are listed in scripts/layering_allowlist.txt
(`file -> included header  # why`); anything else fails (exit 1). An allow-list
entry that no longer matches is reported as a note (an error with --strict).

Files under the scanned directories that no target owns are listed as
unchecked. tests/ holds no C/C++ today (Python, shell, corpora).

Usage: check_layering.py [--root DIR] [--allowlist FILE] [--strict]
                         [--verbose] [--modules] [--self-test]
"""

import argparse
import os
import re
import shutil
import sys
import tempfile

# ---- rules ------------------------------------------------------------------

SCAN_DIRS = ("src", "client", "bench", "include", "tools", "tests")
# Where "<dir>/<file>.h" includes are looked up, in order (after the including
# file's own directory): src/ for the modules, include/ for the client API.
INCLUDE_ROOTS = ("src", "include")
SOURCE_EXTS = (".cc", ".cpp", ".cxx", ".c", ".h", ".hh", ".hpp", ".inl")
TEST_FILE_RE = re.compile(r"(_test\.cc|_fuzz\.cc|_test_util\.h)$")
TEST_ONLY_HEADER_RE = re.compile(r"_test_util\.h$")

TEST_EXTRA_MODULES = ("io", "meta")

# include prefix -> (library, CMake link items that provide it). None: test code only.
EXTERNAL_HEADERS = [
    ("openssl/", "OpenSSL", {"OpenSSL::Crypto", "OpenSSL::SSL"}),
    ("rocksdb/", "RocksDB", {"RocksDB::rocksdb", "rocksdb"}),
    ("boost/", "Boost", {"Boost::boost", "Boost::headers", "Boost::system", "Boost::asio"}),
    ("pugixml.hpp", "pugixml", {"pugixml::pugixml", "pugixml", "pugixml::static",
                                "pugixml::shared"}),
    ("nlohmann/", "nlohmann_json", {"nlohmann_json::nlohmann_json"}),
    ("CLI/", "CLI11", {"CLI11::CLI11"}),
    ("toml++/", "tomlplusplus", {"tomlplusplus::tomlplusplus"}),
    ("isa-l", "ISA-L", {"${ISAL_LIB}"}),
    ("zstd.h", "zstd", {"${ZSTD_LIB}"}),  # isa-l.h, isa-l/erasure_code.h
    ("pybind11/", "pybind11", {"pybind11::module", "pybind11::headers", "pybind11::pybind11"}),
    ("Python.h", "Python", {"pybind11::module", "Python3::Python", "Python3::Module"}),
    ("gtest/", "GoogleTest", None),
    ("gmock/", "GoogleTest", None),
]

# header (or directory prefix ending in '/') -> (owning module, why).
PRIVATE_HEADERS = {
    "auth/auth_util.h": ("auth", "auth's internal helpers (namespace detail); "
                                 "others use sigv4.h, sigv2.h, aws_chunked.h"),
    "auth/policy_values.h": ("auth", "the policy language's internals; others use auth/policy.h"),
    "auth/policy_compiled.h": ("auth", "the policy language's internals; others use auth/policy.h"),
    "s3/ops/": ("s3", "s3/ops/ are the operation families behind the router; "
                      "outside s3 use s3/service.h"),
}

# (module, dependency) -> (headers of the dependency it may include, why).
NARROW_EDGES = {
    ("object", "storage"): ({"storage/data_store.h"},
                            "object/ uses storage through the DataStore interface"),
    ("remote", "storage"): ({"storage/data_store.h"},
                            "remote/ implements the DataStore interface, nothing more of storage"),
    ("remote", "auth"): ({"auth/signer.h"}, "remote/ signs its requests; it verifies none"),
    ("remote", "http"): ({"http/client.h"},
                         "remote/ sends its requests through the HTTP client; it serves nothing"),
    ("notify", "http"): ({"http/client.h"},
                         "notify/ posts events through the HTTP client; it serves nothing"),
    ("kvcache", "auth"): ({"auth/credentials.h"},
                          "kvcache authenticates with its own HMAC challenge; it takes only the "
                          "credentials type (SecretLookup) from auth"),
}


class Rules:
    def __init__(self, test_extra=TEST_EXTRA_MODULES, private=None, narrow=None):
        self.test_extra = tuple(test_extra)
        self.private = PRIVATE_HEADERS if private is None else private
        self.narrow = NARROW_EDGES if narrow is None else narrow


# ---- CMake (just enough of it) ----------------------------------------------

TARGET_KEYWORDS = {"STATIC", "SHARED", "OBJECT", "MODULE", "INTERFACE", "EXCLUDE_FROM_ALL",
                   "WIN32", "MACOSX_BUNDLE", "THIN_LTO", "NO_EXTRAS", "SYSTEM"}
LINK_KEYWORDS = {"PRIVATE", "PUBLIC", "INTERFACE", "LINK_PRIVATE", "LINK_PUBLIC",
                 "LINK_INTERFACE_LIBRARIES", "BEFORE", "AFTER", "SYSTEM"}


def cmake_commands(text):
    """Yields (command, [args]) of a CMakeLists, comments removed. Ignores control
    flow: a target declared inside if() counts as declared."""
    out = []
    for line in text.splitlines():
        quoted = False
        for i, ch in enumerate(line):
            if ch == '"':
                quoted = not quoted
            elif ch == "#" and not quoted:
                line = line[:i]
                break
        out.append(line)
    s = "\n".join(out)
    pos = 0
    name_re = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
    while True:
        m = name_re.search(s, pos)
        if not m:
            return
        depth, j, quoted = 1, m.end(), False
        while j < len(s) and depth:
            ch = s[j]
            if ch == '"':
                quoted = not quoted
            elif not quoted and ch == "(":
                depth += 1
            elif not quoted and ch == ")":
                depth -= 1
            j += 1
        args = [a[1:-1] if a.startswith('"') else a
                for a in re.findall(r'"[^"]*"|[^\s"]+', s[m.end():j - 1])]
        yield m.group(1).lower(), args
        pos = j


class Target:
    def __init__(self, name, module, cmake_dir):
        self.name = name            # CMake target name
        self.module = module        # declared with strata_module
        self.cmake_dir = cmake_dir  # repo-relative directory of its CMakeLists
        self.sources = []           # repo-relative
        self.tests = []
        self.deps = []              # link items as written
        self.include_dirs = []      # repo-relative
        self.objects_of = None      # built from $<TARGET_OBJECTS:x>
        self.pybind = False

    @property
    def group(self):
        n = self.name
        return n[len("strata_"):] if n.startswith("strata_") else n


class Project:
    """The targets of a tree and which file belongs to which target."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.targets = {}   # name -> Target, in declaration order
        self.notes = []
        self._parse()
        self._groups()
        self._own_files()

    # -- parsing
    def _path(self, cmake_dir, token):
        """A source or directory argument as a repo-relative path; None if unknown."""
        token = (token.replace("${CMAKE_CURRENT_SOURCE_DIR}", os.path.join(self.root, cmake_dir))
                 .replace("${PROJECT_SOURCE_DIR}", self.root)
                 .replace("${CMAKE_SOURCE_DIR}", self.root))
        if "$" in token:
            return None
        p = os.path.relpath(os.path.normpath(os.path.join(self.root, cmake_dir, token)),
                            self.root)
        return "" if p == "." else p

    def _parse(self):
        files = []
        for top in SCAN_DIRS:
            for dirpath, dirnames, filenames in os.walk(os.path.join(self.root, top)):
                dirnames.sort()
                if "CMakeLists.txt" in filenames:
                    files.append(os.path.relpath(os.path.join(dirpath, "CMakeLists.txt"),
                                                 self.root))
        pending = []
        for f in files:
            d = os.path.dirname(f)
            with open(os.path.join(self.root, f), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            test_sources, test_libs = [], []
            for cmd, args in cmake_commands(text):
                if cmd == "strata_module" and args:
                    t = Target("strata_" + args[0], True, d)
                    section = None
                    for a in args[1:]:
                        if a in ("SOURCES", "DEPS", "TESTS"):
                            section = a
                        elif section == "SOURCES":
                            t.sources.append(self._path(d, a))
                        elif section == "TESTS":
                            t.tests.append(self._path(d, a))
                        elif section == "DEPS":
                            t.deps.append(a)
                    self.targets[t.name] = t
                elif cmd in ("add_library", "add_executable", "pybind11_add_module") and args:
                    if "IMPORTED" in args or "ALIAS" in args:
                        continue
                    t = Target(args[0], False, d)
                    t.pybind = cmd == "pybind11_add_module"
                    for a in args[1:]:
                        m = re.fullmatch(r"\$<TARGET_OBJECTS:([^>]+)>", a)
                        if m:
                            t.objects_of = m.group(1)
                        elif a not in TARGET_KEYWORDS:
                            p = self._path(d, a)
                            if p is not None:
                                t.sources.append(p)
                    self.targets.setdefault(t.name, t)
                elif cmd == "target_link_libraries" and args:
                    pending.append(("link", args[0], [a for a in args[1:]
                                                      if a not in LINK_KEYWORDS]))
                elif cmd == "target_include_directories" and args:
                    dirs = [self._path(d, a) for a in args[1:] if a not in LINK_KEYWORDS]
                    pending.append(("inc", args[0], [x for x in dirs if x is not None]))
                elif cmd == "set_property" and "STRATA_TEST_SOURCES" in args:
                    i = args.index("STRATA_TEST_SOURCES")
                    test_sources += [self._path(d, a) for a in args[i + 1:]]
                elif cmd == "set_property" and "STRATA_TEST_LIBS" in args:
                    i = args.index("STRATA_TEST_LIBS")
                    test_libs += args[i + 1:]
            test_sources = [s for s in test_sources if s]
            if test_sources and len(test_libs) == 1 and test_libs[0] in self.targets:
                self.targets[test_libs[0]].tests += test_sources
            elif test_sources:
                self.notes.append("%s: unit-test sources without exactly one known test "
                                  "library; their files are checked by pattern" % f)
        for kind, name, items in pending:
            t = self.targets.get(name)
            if t is None:
                self.notes.append("target_%s on unknown target %s" %
                                  ("link_libraries" if kind == "link" else "include_directories",
                                   name))
            elif kind == "link":
                t.deps += items
            else:
                t.include_dirs += items

    # -- groups: a target built from another's objects is that target
    def _canon(self, name):
        seen = set()
        while name in self.targets and self.targets[name].objects_of and name not in seen:
            seen.add(name)
            name = self.targets[name].objects_of
        return name

    def _groups(self):
        self.group_of = {}   # target name -> group name
        self.members = {}    # group -> [Target]
        for name in self.targets:
            g = self.targets[self._canon(name)].group
            self.group_of[name] = g
            self.members.setdefault(g, []).append(self.targets[name])
        self.deps = {}       # group -> set of groups (direct)
        self.externals = {}  # group -> set of link items that are not project targets
        for g, ts in self.members.items():
            deps, ext = set(), set()
            for t in ts:
                for item in t.deps:
                    if item in self.targets:
                        deps.add(self.group_of[item])
                    else:
                        ext.add(item)
                if t.pybind:
                    ext.add("pybind11::module")
            deps.discard(g)
            self.deps[g], self.externals[g] = deps, ext

    def closure(self, group):
        seen, todo = set(), [group]
        while todo:
            for d in self.deps.get(todo.pop(), ()):
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        seen.discard(group)
        return seen

    # -- which file is whose
    def _own_files(self):
        self.files = []
        for top in SCAN_DIRS:
            for dirpath, dirnames, filenames in os.walk(os.path.join(self.root, top)):
                dirnames.sort()
                for fn in sorted(filenames):
                    if fn.endswith(SOURCE_EXTS):
                        self.files.append(os.path.relpath(os.path.join(dirpath, fn), self.root))
        self.owner = {}  # file -> (group, is_test)
        ordered = ([t for t in self.targets.values() if t.module] +
                   [t for t in self.targets.values() if not t.module])
        for t in ordered:                      # 1. listed tests and module sources
            for f in t.tests:
                self.owner.setdefault(f, (self.group_of[t.name], True))
            if t.module:
                for f in t.sources:
                    self.owner.setdefault(f, (self.group_of[t.name], False))
        homes = []                             # a target's home: its sources' common directory
        for t in ordered:
            srcs = [s for s in t.sources if s.endswith(SOURCE_EXTS)]
            if srcs:
                home = os.path.commonpath([os.path.dirname(s) or "." for s in srcs])
                homes.append((home, t))
            for inc in t.include_dirs:
                if inc and inc.split(os.sep)[0] != "src":  # include/: the client API
                    homes.append((inc, t))
        self.public_roots = [inc for t in self.targets.values() for inc in t.include_dirs
                             if inc and inc.split(os.sep)[0] == "include"]

        def dir_owner(f, modules_only=False):
            best = None
            for home, t in homes:
                if modules_only and not t.module:
                    continue
                if f.startswith(home + os.sep):
                    key = (len(home), t.module, len(t.sources))
                    if best is None or key > best[0]:
                        best = (key, t)
            return best[1] if best else None

        for f in self.files:                   # 2. tests and fuzz targets by name
            if f not in self.owner and TEST_FILE_RE.search(f):
                t = dir_owner(f, modules_only=True) or dir_owner(f)
                if t:
                    self.owner[f] = (self.group_of[t.name], True)
        for t in ordered:                      # 3. the sources of plain targets
            for s in t.sources:
                self.owner.setdefault(s, (self.group_of[t.name], False))
        stems = {}
        for f, (g, is_test) in self.owner.items():
            if not f.endswith(".h"):
                stems.setdefault(os.path.splitext(f)[0], (g, is_test))
        for f in self.files:                   # 4. a header goes with its .cc, else its directory
            if f in self.owner:
                continue
            o = stems.get(os.path.splitext(f)[0])
            if o:
                self.owner[f] = o
            else:
                t = dir_owner(f)
                if t:
                    self.owner[f] = (self.group_of[t.name], bool(TEST_FILE_RE.search(f)))
        self.unchecked = [f for f in self.files if f not in self.owner]

    def resolve(self, including, header, quoted):
        """The repo-relative file an include names, or None when outside the tree."""
        if quoted:
            local = os.path.normpath(os.path.join(os.path.dirname(including), header))
            if os.path.isfile(os.path.join(self.root, local)):
                return local
        for r in INCLUDE_ROOTS:
            p = os.path.normpath(os.path.join(r, header))
            if os.path.isfile(os.path.join(self.root, p)):
                return p
        return None


# ---- the check --------------------------------------------------------------

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        in_comment = False
        for n, line in enumerate(fh, 1):
            if in_comment:
                if "*/" not in line:
                    continue
                line, in_comment = line.split("*/", 1)[1], False
            m = INCLUDE_RE.match(line)
            if m:
                yield n, m.group(2), m.group(1) == '"'
            elif "/*" in line and "*/" not in line.split("/*", 1)[1]:
                in_comment = True


def private_owner(rules, header):
    for key, (mod, why) in rules.private.items():
        if header == key or (key.endswith("/") and header.startswith(key)):
            return mod, why
    return None


def check(project, rules):
    """Returns [(file, line, header_as_written, message)]."""
    p = project
    out = []
    test_allowed = {}
    for f in p.files:
        if f not in p.owner:
            continue
        group, is_test = p.owner[f]
        if is_test and group not in test_allowed:
            allowed = p.closure(group) | {m for m in rules.test_extra if m in p.deps}
            ext = set()
            for g in allowed | {group}:
                ext |= p.externals.get(g, set())
            test_allowed[group] = (allowed, ext)
        allowed, ext = (test_allowed[group] if is_test
                        else (p.deps.get(group, set()), p.externals.get(group, set())))
        public = any(f.startswith(r + os.sep) for r in p.public_roots)
        kind = "test code of module" if is_test else "module"
        for line, header, quoted in includes(os.path.join(p.root, f)):
            written = header if quoted else "<%s>" % header
            target = p.resolve(f, header, quoted)
            msg = None
            if target is None:
                lib = next(((name, items) for prefix, name, items in EXTERNAL_HEADERS
                            if header.startswith(prefix)), None)
                if lib is None:
                    if quoted:
                        p.notes.append("%s:%d: %s not found in the tree (generated?)" %
                                       (f, line, written))
                    continue
                name, items = lib
                if items is None:
                    if not is_test:
                        msg = "%s %s includes %s (%s: test code only)" % (kind, group, written,
                                                                         name)
                elif not (items & ext):
                    msg = "%s %s includes %s (%s: not a declared dependency)" % (
                        kind, group, written, name)
            elif target not in p.owner:
                msg = "%s %s includes %s (a file no target builds)" % (kind, group, written)
            else:
                tgroup, _ = p.owner[target]
                priv = private_owner(rules, os.path.relpath(target, "src"))
                if public and not any(target.startswith(r + os.sep) for r in p.public_roots):
                    msg = "public header of %s includes %s (not part of include/)" % (group,
                                                                                    written)
                elif TEST_ONLY_HEADER_RE.search(target) and not is_test:
                    msg = "module %s includes %s (a test-only header)" % (group, written)
                elif tgroup == group:
                    pass
                elif tgroup not in allowed:
                    msg = "%s %s includes %s (%s; not a declared dependency)" % (
                        kind, group, tgroup, written)
                elif priv and priv[0] != group:
                    msg = "%s %s includes %s (private to %s: %s)" % (kind, group, written,
                                                                     priv[0], priv[1])
                elif not is_test and (group, tgroup) in rules.narrow:
                    headers, why = rules.narrow[(group, tgroup)]
                    if os.path.relpath(target, "src") not in headers:
                        through = ("only through " + ", ".join(sorted(headers)) if headers
                                   else "through no header yet")
                        msg = "module %s includes %s (%s may use %s %s: %s)" % (
                            group, written, group, tgroup, through, why)
            if msg:
                out.append((f, line, written, msg))
    return out


def read_allowlist(path):
    entries = {}
    if not os.path.isfile(path):
        return entries
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if "->" not in line:
                raise SystemExit("%s:%d: expected `file -> included header  # why`" % (path, n))
            f, h = (x.strip() for x in line.split("->", 1))
            entries[(f, h)] = n
    return entries


def run(root, allowlist, strict=False, verbose=False, rules=None, out=sys.stdout):
    project = Project(root)
    violations = check(project, rules or Rules())
    allowed = read_allowlist(allowlist)
    new, known, used = [], [], set()
    for f, line, written, msg in violations:
        key = (f, written)
        if key in allowed:
            used.add(key)
            known.append((f, line, msg))
        else:
            new.append((f, line, msg))
    for f, line, msg in new:
        print("%s:%d: %s" % (f, line, msg), file=out)
    if verbose:
        for f, line, msg in known:
            print("%s:%d: [allow-listed] %s" % (f, line, msg), file=out)
        for f in project.unchecked:
            print("unchecked: %s (no target builds it)" % f, file=out)
        for n in project.notes:
            print("note: %s" % n, file=out)
    stale = sorted((n, k) for k, n in allowed.items() if k not in used)
    for n, (f, h) in stale:
        print("%s:%d: %s: allow-list entry %s -> %s matches nothing; remove it" % (
            os.path.relpath(allowlist, root) if allowlist.startswith(root) else allowlist, n,
            "error" if strict else "note", f, h), file=out)
    checked = len(project.files) - len(project.unchecked)
    print("layering: %d files of %d targets checked, %d violations (%d allow-listed, %d new)%s"
          % (checked, len(project.members), len(violations), len(known), len(new),
             ", %d unchecked" % len(project.unchecked) if project.unchecked else ""), file=out)
    return 1 if new or (strict and stale) else 0


def print_modules(root):
    p = Project(root)
    for g in p.members:
        files = sorted(f for f, (og, _) in p.owner.items() if og == g)
        print("%-16s deps: %s" % (g, " ".join(sorted(p.deps[g])) or "-"))
        print("%-16s closure: %s" % ("", " ".join(sorted(p.closure(g))) or "-"))
        print("%-16s external: %s" % ("", " ".join(sorted(p.externals[g])) or "-"))
        print("%-16s files: %d" % ("", len(files)))
    for f in p.unchecked:
        print("unchecked: %s" % f)


# ---- self-test ---------------------------------------------------------------

FIXTURE = {
    "src/common/CMakeLists.txt":
        "strata_module(common SOURCES status.cc DEPS OpenSSL::Crypto  # a comment (with parens)\n"
        "  TESTS status_test.cc)\n",
    "src/common/status.h": "#pragma once\n#include <string>\n",
    "src/common/status.cc": '#include "common/status.h"\n#include <openssl/evp.h>\n',
    "src/common/status_test.cc": '#include <gtest/gtest.h>\n#include "common/status.h"\n',
    "src/io/CMakeLists.txt": "strata_module(io SOURCES mem_fs.cc DEPS strata_common)\n",
    "src/io/mem_fs.h": '#include "common/status.h"\n',
    "src/io/mem_fs.cc": '#include "io/mem_fs.h"\n',
    "src/meta/CMakeLists.txt": "strata_module(meta SOURCES kv.cc DEPS strata_common)\n",
    "src/meta/kv.h": '#include "common/status.h"\n',
    "src/meta/kv.cc": '#include "meta/kv.h"\n',
    "src/storage/CMakeLists.txt":
        "strata_module(storage\n  SOURCES store.cc\n  DEPS strata_common strata_io\n"
        "  TESTS store_test.cc)\n",
    "src/storage/store.h": '#include "io/mem_fs.h"\n',
    "src/storage/iface.h": '#include "common/status.h"\n',
    "src/storage/store.cc": '#include "storage/store.h"\n#include "storage/iface.h"\n',
    "src/storage/store_test.cc": '#include "storage/store.h"\n#include "meta/kv.h"\n'
                                 '#include "io/mem_fs.h"\n#include <gtest/gtest.h>\n',
    "src/object/CMakeLists.txt":
        "strata_module(object SOURCES engine.cc DEPS strata_storage strata_meta strata_common\n"
        "  TESTS engine_test.cc)\n"
        "if(FUZZ)\n  add_executable(engine_fuzz proto/engine_fuzz.cc)\n"
        "  target_link_libraries(engine_fuzz PRIVATE strata_common)\nendif()\n",
    "src/object/engine.h": '#include "storage/iface.h"\n#include "meta/kv.h"\n',
    "src/object/engine.cc": '#include "object/engine.h"\n/* #include "s3/x.h" */\n',
    "src/object/engine_test.cc": '#include "object/engine.h"\n#include "storage/store.h"\n'
                                 '#include "io/mem_fs.h"\n#include "object/engine_test_util.h"\n',
    "src/object/engine_test_util.h": '#include <gtest/gtest.h>\n#include "io/mem_fs.h"\n',
    "src/object/proto/engine_fuzz.cc": '#include "object/engine.h"\n',
    "src/server/CMakeLists.txt":
        "add_executable(strata main.cc)\n"
        "target_link_libraries(strata PRIVATE strata_object strata_storage strata_meta\n"
        "  strata_io strata_common)\n",
    "src/server/main.cc": '#include "object/engine.h"\n#include "storage/store.h"\n',
    "client/CMakeLists.txt":
        "add_library(kvclient_objs OBJECT client.cc)\n"
        "target_include_directories(kvclient_objs PUBLIC ${PROJECT_SOURCE_DIR}/include)\n"
        "target_link_libraries(kvclient_objs PRIVATE strata_common)\n"
        "add_library(kvclient STATIC $<TARGET_OBJECTS:kvclient_objs>)\n"
        "set_property(GLOBAL APPEND PROPERTY STRATA_TEST_SOURCES "
        "${CMAKE_CURRENT_SOURCE_DIR}/client_test.cc)\n"
        "set_property(GLOBAL APPEND PROPERTY STRATA_TEST_LIBS kvclient)\n",
    "client/client.cc": '#include "strata/client.h"\n#include "common/status.h"\n',
    "client/client_test.cc": '#include "strata/client.h"\n#include "common/status.h"\n',
    "include/strata/client.h": "#include <stdint.h>\n",
}

# What a clean tree turns into a violation; (file, appended line, expected message part).
BREAKAGES = [
    ("src/storage/store.cc", '#include "object/engine.h"',
     "module storage includes object (object/engine.h; not a declared dependency)"),
    ("src/object/engine.cc", '#include "io/mem_fs.h"',
     "module object includes io (io/mem_fs.h; not a declared dependency)"),
    ("src/common/status_test.cc", '#include "storage/store.h"',
     "test code of module common includes storage"),
    ("src/object/engine.cc", "#include <openssl/evp.h>",
     "module object includes <openssl/evp.h> (OpenSSL: not a declared dependency)"),
    ("src/object/engine.cc", '#include "object/engine_test_util.h"',
     "(a test-only header)"),
    ("src/object/engine.cc", "#include <gtest/gtest.h>", "(GoogleTest: test code only)"),
    ("src/object/engine.cc", '#include "storage/store.h"',
     "object may use storage only through storage/iface.h"),
    ("src/server/main.cc", '#include "storage/store_private.h"', "(private to storage"),
    ("include/strata/client.h", '#include "common/status.h"', "(not part of include/)"),
    ("client/client.cc", '#include "meta/kv.h"',
     "module kvclient_objs includes meta (meta/kv.h; not a declared dependency)"),
]


def self_test():
    rules = Rules(private={"storage/store_private.h": ("storage", "fixture")},
                  narrow={("object", "storage"): ({"storage/iface.h"}, "fixture")})
    failures = []
    base = tempfile.mkdtemp(prefix="layering-selftest-")
    try:
        def make(tree):
            root = tempfile.mkdtemp(dir=base)
            for rel, text in tree.items():
                path = os.path.join(root, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
            return root

        def violations(root):
            return check(Project(root), rules)

        clean = FIXTURE.copy()
        clean["src/storage/store_private.h"] = "#pragma once\n"
        root = make(clean)
        p = Project(root)
        got = violations(root)
        if got:
            failures.append("clean fixture: unexpected %s" % got)
        if p.unchecked:
            failures.append("clean fixture: unchecked %s" % p.unchecked)
        if p.owner.get("src/object/proto/engine_fuzz.cc") != ("object", True):
            failures.append("fuzz target not owned as object test code: %s" %
                            (p.owner.get("src/object/proto/engine_fuzz.cc"),))
        if p.owner.get("client/client_test.cc") != ("kvclient_objs", True):
            failures.append("STRATA_TEST_SOURCES not tied to its library: %s" %
                            (p.owner.get("client/client_test.cc"),))
        for f, line, want in BREAKAGES:
            tree = clean.copy()
            tree[f] = tree[f] + line + "\n"
            got = violations(make(tree))
            if len(got) != 1 or got[0][0] != f or want not in got[0][3]:
                failures.append("%s + %s: expected one violation containing %r, got %s" %
                                (f, line, want, got))
        # The allow-list silences a known violation (and only it).
        tree = clean.copy()
        tree["src/storage/store.cc"] += '#include "object/engine.h"\n#include "meta/kv.h"\n'
        root = make(tree)
        allow = os.path.join(root, "allow.txt")
        with open(allow, "w", encoding="utf-8") as fh:
            fh.write("# known\nsrc/storage/store.cc -> object/engine.h  # fixture\n")
        sink = open(os.devnull, "w")
        if run(root, allow, rules=rules, out=sink) != 1:
            failures.append("allow-list: the second violation must still fail")
        tree["src/storage/store.cc"] = clean["src/storage/store.cc"] + '#include "object/engine.h"\n'
        root = make(tree)
        allow2 = os.path.join(root, "allow.txt")
        shutil.copy(allow, allow2)
        if run(root, allow2, rules=rules, out=sink) != 0:
            failures.append("allow-list: an allow-listed violation must pass")
        with open(allow2, "a", encoding="utf-8") as fh:
            fh.write("src/io/mem_fs.cc -> storage/store.h  # stale\n")
        if run(root, allow2, rules=rules, out=sink) != 0 or \
                run(root, allow2, strict=True, rules=rules, out=sink) != 1:
            failures.append("allow-list: a stale entry is a note, an error with --strict")
        sink.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    for f in failures:
        print("self-test FAILED: %s" % f)
    if not failures:
        print("layering self-test passed: clean fixture, %d breakages caught, allow-list"
              % len(BREAKAGES))
    return 1 if failures else 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(here), help="the source tree")
    ap.add_argument("--allowlist", help="default: <root>/scripts/layering_allowlist.txt")
    ap.add_argument("--strict", action="store_true", help="stale allow-list entries fail")
    ap.add_argument("--verbose", "-v", action="store_true",
                    help="also list allow-listed violations, unchecked files and notes")
    ap.add_argument("--modules", action="store_true", help="print the module graph and exit")
    ap.add_argument("--self-test", action="store_true",
                    help="test the checker on fixtures first, then check the tree")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    if a.modules:
        print_modules(root)
        return 0
    rc = self_test() if a.self_test else 0
    allowlist = a.allowlist or os.path.join(root, "scripts", "layering_allowlist.txt")
    return run(root, allowlist, strict=a.strict, verbose=a.verbose) or rc


if __name__ == "__main__":
    sys.exit(main())
