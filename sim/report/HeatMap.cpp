#include "sim/report/HeatMap.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/metrics/LinkUtilization.hpp"

namespace stepsim {

namespace {
std::ofstream open(const std::filesystem::path& p) {
    std::ofstream os(p);
    if (!os) throw InputError(fmt::format("{}: cannot write the heat map's file", p.string()));
    return os;
}

std::string quoted(const std::string& s) {
    std::string out;
    for (char c : s) out += (c == '"' || c == '\\') ? '_' : c;
    return out;
}
}  // namespace

std::filesystem::path writeHeatMap(const LinkUtilization& u, const std::string& title, const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw InputError(fmt::format("{}: cannot create the plot folder: {}", dir.string(), ec.message()));
    {
        std::ofstream dat = open(dir / "link_utilization.dat");
        dat << "# link bin_start_ms utilization class   (LinkUtilization.hpp; one block per link)\n";
        for (std::size_t l = 0; l < u.links.size(); ++l) {
            for (std::size_t b = 0; b < u.links[l].util.size(); ++b) {
                const double x = std::round(u.links[l].util[b] * 1e4) * 1e-4;  // as printed, so the class matches
                dat << fmt::format("{} {:.6g} {:.4f} {}\n", l, double(b) * u.bin_ms, x,
                                   utilizationClassName(utilizationClass(x)));
            }
            dat << "\n";
        }
    }
    const std::filesystem::path gp = dir / "link_utilization.gp";
    std::ofstream os = open(gp);
    const int rows = static_cast<int>(u.links.size());
    os << "# stepsim run --plot: link utilization over time (gnuplot link_utilization.gp)\n";
    os << fmt::format("set terminal png size 1200,{} font ',10'\n", std::max(300, 120 + 18 * rows));
    os << "set output 'link_utilization.png'\n";
    os << fmt::format("set title \"{} — link utilization (cold < 30%, hot 60–85%)\" noenhanced\n", quoted(title));
    os << "set xlabel 'time (ms)'\nunset key\n";
    os << fmt::format("set xrange [0:{:.6g}]\nset yrange [-0.5:{}.5]\n", u.bin_ms * u.bins, rows - 1);
    os << "set cbrange [0:1]\nset cbtics ('0' 0, '30%%' 0.3, '60%%' 0.6, '85%%' 0.85, '100%%' 1)\n";
    os << "set palette defined (0 '#2c6db5', 0.3 '#2c6db5', 0.3 '#f2d45c', 0.6 '#f2d45c', 0.6 '#f08a24', "
          "0.85 '#f08a24', 0.85 '#c0392b', 1 '#c0392b')\n";
    os << "set ytics (";
    for (int l = 0; l < rows; ++l)
        os << fmt::format("{}\"{} ({})\" {}", l ? ", " : "", quoted(u.links[l].name), u.links[l].kind, l);
    os << ") noenhanced\n";
    os << fmt::format("plot 'link_utilization.dat' using ($2+{:.6g}):1:3 with image\n", u.bin_ms / 2);
    return gp;
}

bool runGnuplot(const std::filesystem::path& script) {
    const std::string cmd = fmt::format("cd '{}' && gnuplot '{}' 2>&1", script.parent_path().string(),
                                        script.filename().string());
    return std::system(cmd.c_str()) == 0;
}

}  // namespace stepsim
