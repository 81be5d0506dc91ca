# The daemon's layout rules (docs/architecture.md), run as a build step by
# daemon/CMakeLists.txt:
#   cmake -DROOT=<checkout> -DRULES=<area=dep,dep;...> -P check_layout.cmake
# A file in daemon/AREA may include headers of AREA itself and of the areas
# AREA lists in rdmad_area(... DEPS ...), nothing else of daemon/; only
# daemon/rpc includes gRPC; no daemon source (tests aside) includes the
# client library's private client/src/; docs/architecture.md's table of
# areas ("| area | may use |") says exactly what rdmad_area says. A
# violation fails the build with the file, the line and the rule.
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" RULES "${RULES}")  # ctest passes the rules "|"-separated
set(errors "")
set(areas "")
foreach(rule IN LISTS RULES)
  string(REPLACE "=" ";" parts "${rule}")
  list(GET parts 0 area)
  list(LENGTH parts n)
  set(deps "")
  if(n GREATER 1)
    list(GET parts 1 dep_text)
    string(REPLACE "," ";" deps "${dep_text}")
  endif()
  set(deps_${area} ${deps})
  list(APPEND areas ${area})
endforeach()

file(GLOB dirs LIST_DIRECTORIES true RELATIVE "${ROOT}/daemon" "${ROOT}/daemon/*")
foreach(dir IN LISTS dirs)
  if(NOT IS_DIRECTORY "${ROOT}/daemon/${dir}")
    continue()
  endif()
  if(NOT dir IN_LIST areas)
    string(APPEND errors "daemon/${dir}/: not an area of daemon/CMakeLists.txt (rdmad_area)\n")
    continue()
  endif()
  file(GLOB files "${ROOT}/daemon/${dir}/*.cc" "${ROOT}/daemon/${dir}/*.h")
  foreach(path IN LISTS files)
    file(RELATIVE_PATH rel "${ROOT}" "${path}")
    file(STRINGS "${path}" lines REGEX "^#include ")
    foreach(line IN LISTS lines)
      if(line MATCHES "^#include \"daemon/([a-z_]+)/")
        set(other "${CMAKE_MATCH_1}")
        if(NOT other STREQUAL dir AND NOT other IN_LIST deps_${dir})
          string(APPEND errors "${rel}: ${line}: area ${dir} does not depend on ${other}"
                 " (its rdmad_area DEPS in daemon/CMakeLists.txt)\n")
        endif()
      endif()
      if(NOT dir STREQUAL "rpc" AND line MATCHES "grpcpp/|grpc\\.pb\\.h")
        string(APPEND errors "${rel}: ${line}: only daemon/rpc uses gRPC\n")
      endif()
      if(NOT rel MATCHES "_test\\.cc$" AND line MATCHES "^#include \"client/src/")
        string(APPEND errors "${rel}: ${line}: the client library's private headers are its"
               " own (shared code lives in common/)\n")
      endif()
    endforeach()
  endforeach()
endforeach()
# The documented table: one row per area, its DEPS as a comma list.
file(STRINGS "${ROOT}/docs/architecture.md" rows REGEX "^\\| [a-z_]+ \\| ")
set(documented "")
foreach(row IN LISTS rows)
  if(NOT row MATCHES "^\\| ([a-z_]+) \\| ([^|]*)\\|$")
    continue()
  endif()
  set(area "${CMAKE_MATCH_1}")
  set(text "${CMAKE_MATCH_2}")
  if(NOT area IN_LIST areas)
    continue()  # another table's row
  endif()
  list(APPEND documented ${area})
  string(REGEX REPLACE "\\(.*\\)" "" text "${text}")  # "(none)", "(and the client library)"
  string(REPLACE "," ";" doc_deps "${text}")
  list(TRANSFORM doc_deps STRIP)
  list(FILTER doc_deps EXCLUDE REGEX "^$")
  list(SORT doc_deps)
  set(code_deps ${deps_${area}})
  list(SORT code_deps)
  if(NOT "${doc_deps}" STREQUAL "${code_deps}")
    string(REPLACE ";" ", " doc_text "${doc_deps}")
    string(REPLACE ";" ", " code_text "${code_deps}")
    string(APPEND errors "docs/architecture.md: area ${area} may use \"${doc_text}\", but its"
           " rdmad_area DEPS are \"${code_text}\"\n")
  endif()
endforeach()
foreach(area IN LISTS areas)
  if(NOT area IN_LIST documented)
    string(APPEND errors "docs/architecture.md: no row for area ${area}\n")
  endif()
endforeach()

if(errors)
  message(FATAL_ERROR "daemon layout (docs/architecture.md):\n${errors}")
endif()
