# stepsim_layer(NAME DIR folder SOURCES a.cpp ... DEPENDS stepsim::x ... [LIBS ...] [PRIVATE_LIBS ...])
#
# One library target per layer, stepsim_NAME with the ALIAS stepsim::NAME. Its headers are reached as
# "folder/Header.hpp" (e.g. "sim/net/FlowNetwork.hpp") through a staging folder that holds a link to `folder`
# alone, so a target's include path holds its own folder and those of the layers it DEPENDS on, and nothing
# else: a header of a higher layer is not found, and an upward include is a compile error. The project root
# itself is on no include path. A layer without sources is an INTERFACE library (headers only). Layers are static
# libraries unless STEPSIM_SHARED_LAYERS is on (scripts/sanitize.sh: each of the hundred test executables then links
# a dozen shared libraries instead of copying the whole simulator, which is most of a sanitized build's link time).
function(stepsim_layer name)
  cmake_parse_arguments(L "" "DIR" "SOURCES;DEPENDS;LIBS;PRIVATE_LIBS" ${ARGN})
  # Layers are declared bottom up, so a dependency not yet declared is a layer above (or a typo): refused here,
  # where the link would otherwise resolve it later and let the upward include through.
  foreach(dep IN LISTS L_DEPENDS)
    if(NOT TARGET ${dep})
      message(FATAL_ERROR "layer ${name} depends on ${dep}, which is not declared before it (layers are declared "
                          "bottom up in the top CMakeLists.txt)")
    endif()
  endforeach()
  set(stage ${PROJECT_BINARY_DIR}/layers/${name})
  get_filename_component(parent ${stage}/${L_DIR} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${L_DIR} ${stage}/${L_DIR} SYMBOLIC)
  set(target stepsim_${name})
  if(L_SOURCES)
    add_library(${target} ${STEPSIM_LAYER_TYPE} ${L_SOURCES})
    set(scope PUBLIC)
    target_compile_options(${target} PRIVATE -Wall -Wextra)
    target_link_libraries(${target} PRIVATE ${L_PRIVATE_LIBS})
  else()
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  endif()
  target_include_directories(${target} ${scope} ${stage})
  target_link_libraries(${target} ${scope} ${L_DEPENDS} ${L_LIBS})
  add_library(stepsim::${name} ALIAS ${target})
endfunction()
