// Runs a Laser++ program on a stream file in Laser++'s text format through the library's own
// ExampleIOManager and Reasoner. Conclusions go to standard output, one line per time point
// ("t -> a(1, 2) a(3, 4) ", ExampleWriter's format); statistics to standard error as JSON.
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include <core/reasoner.h>
#include <example/example_io_manager.h>
#include <rule/rule_parser.h>
#include <util/chase_algorithm.h>
#include <util/settings.h>

static std::string slurp(const char *path) {
    std::ifstream f(path);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

static double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        std::cerr << "usage: lpp_run PROGRAM STREAM > OUTPUT" << std::endl;
        return 2;
    }
    std::ios::sync_with_stdio(false);
    double cpu0 = cpu_seconds();
    auto wall0 = std::chrono::steady_clock::now();
    laser::util::Settings::get_instance().set_chase_algorithm(laser::util::ChaseAlgorithm::OBLIVIOUS);
    auto io = laser::example::ExampleIOManager(slurp(argv[2]));
    auto parser = laser::rule::RuleParser(slurp(argv[1]));
    auto rules = parser.get_rules();
    auto reasoner = laser::core::Reasoner(rules, &io);
    reasoner.start();
    std::cout.flush();
    double evaluate = 0;
    for (double t : reasoner.get_runtimes()) evaluate += t;
    std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall0;
    std::cerr << "{\"facts\": " << reasoner.get_total_facts_read()
              << ", \"conclusions\": " << reasoner.get_total_conclusions()
              << ", \"evaluate_wall_s\": " << evaluate << ", \"cpu_s\": " << cpu_seconds() - cpu0
              << ", \"wall_s\": " << wall.count() << "}" << std::endl;
    return 0;
}
