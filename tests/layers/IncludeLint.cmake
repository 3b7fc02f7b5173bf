# cmake -DROOTS="dir;dir" -P IncludeLint.cmake: every quoted #include in the C++ files under ROOTS names its header
# from the project root ("sim/layer/Header.hpp", "tests/folder/Helper.hpp", or the generated built-in profiles).
# A quoted include is looked up beside the including file before any include path, so a relative one
# ("../engine/EventQueue.hpp", or a bare "Header.hpp" of another folder) would go around the layers' include paths
# (cmake/StepsimLayer.cmake) and compile. Any such line fails, named with its file and line.
if(NOT ROOTS)
  message(FATAL_ERROR "IncludeLint.cmake: pass -DROOTS=<folders to check>")
endif()
set(bad 0)
foreach(root IN LISTS ROOTS)
  file(GLOB_RECURSE files ${root}/*.cpp ${root}/*.hpp ${root}/*.cu ${root}/*.cuh)
  foreach(f IN LISTS files)
    if(f MATCHES "/tests/layers/probe_")
      if(NOT root MATCHES "/tests/layers/probe_")
        continue()  # the probes below are bad on purpose; they are checked by their own test
      endif()
    endif()
    file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    set(n 0)
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "#[ \t]*include[ \t]*\"(sim|tests)/[^\"]+\"" AND
         NOT line MATCHES "#[ \t]*include[ \t]*\"calibration/BuiltinProfiles.inc\"")
        message(SEND_ERROR "${f}: ${line}: a quoted include must name its header from the project root "
                           "(\"sim/<layer>/Header.hpp\"), so that the layers' include paths apply")
        math(EXPR bad "${bad} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
if(bad GREATER 0)
  message(FATAL_ERROR "${bad} include(s) go around the layers")
endif()
