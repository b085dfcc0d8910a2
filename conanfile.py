"""Conan 2 recipe for crew, a header-only C++20 library of thread pools.

    conan create .                 # builds test_package/ against the package
    conan create . --build=missing

Consumers then write, exactly as with crew's own CMake package:

    find_package(crew CONFIG REQUIRED)
    target_link_libraries(app PRIVATE crew::crew)
"""
import os
import re

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy, load
from conan.tools.layout import basic_layout

required_conan_version = ">=2.0"


class CrewConan(ConanFile):
    name = "crew"
    description = ("Policy-based thread pools with the semantics of Java's "
                   "ThreadPoolExecutor (header-only, C++20)")
    topics = ("thread-pool", "executor", "concurrency", "header-only")
    package_type = "header-library"
    # Kept so that validate() can check the C++ standard; package_id() clears them.
    settings = "os", "arch", "compiler", "build_type"
    exports_sources = "include/*", "LICENSE*"
    no_copy_source = True

    def set_version(self):
        # Called on `conan create`/`conan export` only. One source of truth:
        # project(crew VERSION x.y.z) in CMakeLists.txt; --version wins.
        if self.version:
            return
        text = load(self, os.path.join(self.recipe_folder, "CMakeLists.txt"))
        self.version = re.search(r"project\(crew\s+VERSION\s+([0-9.]+)", text).group(1)

    def layout(self):
        basic_layout(self)

    def requirements(self):
        # Boost's headers (Lockfree), 1.74 or later, as the CMake package asks.
        # Requirements of a header-library are transitive (headers and
        # libs), so consumers see Boost too. Only headers are used:
        # `-o "boost/*:header_only=True"` avoids building Boost's libraries.
        self.requires("boost/[>=1.74 <2]")

    def package_id(self):
        # Headers only: one package for every OS, compiler and build type.
        self.info.clear()

    def validate(self):
        check_min_cppstd(self, 20)

    def build(self):
        pass

    def package(self):
        copy(self, "LICENSE*", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*.hpp", os.path.join(self.source_folder, "include"),
             os.path.join(self.package_folder, "include"))

    def package_info(self):
        # The same file and target names as crew's own CMake package, so a
        # consumer's CMakeLists.txt is the same either way.
        self.cpp_info.set_property("cmake_file_name", "crew")
        self.cpp_info.set_property("cmake_target_name", "crew::crew")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.requires = ["boost::headers"]
        if self.settings.os in ["Linux", "FreeBSD"]:
            self.cpp_info.system_libs = ["pthread"]
