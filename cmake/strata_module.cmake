# strata_module(NAME SOURCES ... DEPS ... TESTS ...)
# Declares a module library `strata_<NAME>`. Sources include each other as
# "<module>/<file>.h". DEPS lists the modules (and external targets) it may
# depend on; tests are collected into the single unit-test binary.
#
# Include roots: a module does not get all of src/. Its include root is
# <build>/include_roots/<NAME>/, which holds one symlink per module it may reach
# — itself and the transitive closure of its DEPS — e.g. include_roots/storage/
# has storage, io, ec and common, and no object/. So a wrong-way or sideways
# include ("object/engine.h" from storage/) fails to compile: file not found.
# The root is PUBLIC: a target linking strata_X sees X's closure, which is a
# subset of what it may reach itself.
# The closure, not just the direct DEPS: object/engine.h includes
# meta/kv_store.h, so every module including object/engine.h must be able to
# find meta/ even when it does not declare meta itself; the preprocessor cannot
# tell an include written by the module from one made by a dependency's header.
# The stricter rules (direct DEPS only, tests, third-party headers, private
# headers) are checked by scripts/check_layering.py (ctest -R layering, and the
# `layering` target of the default build).
function(strata_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS;TESTS" ${ARGN})
  add_library(strata_${name} STATIC ${M_SOURCES})
  target_include_directories(strata_${name} PUBLIC ${PROJECT_BINARY_DIR}/include_roots/${name})
  target_link_libraries(strata_${name} PUBLIC ${M_DEPS})
  foreach(t ${M_TESTS})
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${t})
      set_property(GLOBAL APPEND PROPERTY STRATA_TEST_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${t})
    else()
      message(WARNING "strata_${name}: test file ${t} is missing")
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY STRATA_TEST_LIBS strata_${name})

  # The module's directory under src/: where its CMakeLists is, plus the
  # subdirectory all its sources share (kvproto: kvcache/proto).
  file(RELATIVE_PATH home ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
  set(sub "")
  set(first TRUE)
  foreach(s ${M_SOURCES} ${M_TESTS})
    get_filename_component(d ${s} DIRECTORY)
    if(first)
      set(sub "${d}")
      set(first FALSE)
    endif()
    while(NOT sub STREQUAL "" AND NOT "${d}/" MATCHES "^${sub}/")
      get_filename_component(sub "${sub}" DIRECTORY)
    endwhile()
  endforeach()
  if(NOT sub STREQUAL "")
    set(home "${home}/${sub}")
  endif()
  set_property(GLOBAL APPEND PROPERTY STRATA_MODULES ${name})
  set_property(GLOBAL PROPERTY STRATA_MODULE_HOME_${name} ${home})
  set(deps "")
  foreach(d ${M_DEPS})
    if(d MATCHES "^strata_(.+)$")
      list(APPEND deps ${CMAKE_MATCH_1})
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY STRATA_MODULE_DEPS_${name} ${deps})
endfunction()

# Builds every module's include root once all modules are declared (deferred to
# the end of the top-level CMakeLists, so modules may be declared in any order).
function(strata_make_include_roots)
  get_property(modules GLOBAL PROPERTY STRATA_MODULES)
  foreach(m ${modules})
    set(reach ${m})
    set(todo ${m})
    while(todo)
      list(POP_FRONT todo cur)
      get_property(deps GLOBAL PROPERTY STRATA_MODULE_DEPS_${cur})
      foreach(d ${deps})
        if(NOT d IN_LIST modules)
          message(FATAL_ERROR "strata_${cur}: DEPS names strata_${d}, which is not a strata_module")
        endif()
        if(NOT d IN_LIST reach)
          list(APPEND reach ${d})
          list(APPEND todo ${d})
        endif()
      endforeach()
    endwhile()
    set(homes "")
    foreach(r ${reach})
      get_property(h GLOBAL PROPERTY STRATA_MODULE_HOME_${r})
      list(APPEND homes ${h})
    endforeach()
    list(SORT homes)  # a directory before its subdirectories
    set(root ${PROJECT_BINARY_DIR}/include_roots/${m})
    file(REMOVE_RECURSE ${root})
    file(MAKE_DIRECTORY ${root})
    set(linked "")
    foreach(h ${homes})
      set(covered FALSE)
      foreach(l ${linked})
        if("${h}/" MATCHES "^${l}/")
          set(covered TRUE)  # kvproto's kvcache/proto when kvcache/ is linked already
        endif()
      endforeach()
      if(NOT covered)
        get_filename_component(parent ${root}/${h} DIRECTORY)
        file(MAKE_DIRECTORY ${parent})
        file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${h} ${root}/${h} SYMBOLIC)
        list(APPEND linked ${h})
      endif()
    endforeach()
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL strata_make_include_roots)
