"""Builds the `quiver` Python package: the pure-Python files from python/quiver
and the native module quiver._quiver, built by CMake (target quiver_python)
in build/python-pip. Install with:

    pip install --no-build-isolation .

(no package index is needed: setuptools, pybind11, numpy come from Debian).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = ROOT / "build" / "python-pip"
        jobs = str(os.cpu_count() or 2)
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                               "-DQUIVER_BUILD_TESTS=OFF", f"-DPYTHON_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", str(build_dir), "--target", "quiver_python", "-j", jobs])
        built = next((build_dir / "python" / "quiver").glob("_quiver*.so"))
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    name="quiver",
    version="0.1.0",
    description="Arrow columnar data moved and joined with accounted, right-sized memory; "
                "a DB-API connector with a memory-bounded CloudFetch client",
    packages=["quiver"],
    package_dir={"": "python"},
    package_data={"quiver": ["*.pyi", "py.typed"]},
    ext_modules=[Extension("quiver._quiver", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
)
