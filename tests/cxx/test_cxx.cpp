/*
 * test_cxx: cairn built as C++ (every source of src/ compiled by the C++ compiler,
 * see CMakeLists.txt here) and called from a C++ program through the public
 * headers, as a consumer that builds cairn's sources inside a C++ project
 * would. The simulator stays C (its header's extern "C" links it).
 *
 * Checks: format, mount, a file written and read back across a remount,
 * stat, cairn_check clean, unmount. Uses C++ only where C would not compile
 * (static_cast, std::vector) so the build is a real C++ one.
 */
#include <cstring>
#include <vector>

#include "cairn.h"
#include "cairn_device.h"
#include "check.h"
#include "csim.h"

namespace {

std::vector<unsigned char> pattern(std::size_t len)
{
    std::vector<unsigned char> v(len);
    for (std::size_t i = 0; i < len; i++)
        v[i] = static_cast<unsigned char>(i * 7u + 3u);
    return v;
}

} // namespace

int main()
{
    csim_options opt;
    std::memset(&opt, 0, sizeof opt);
    opt.seed = 1;
    csim *sim = csim_new("nor-m25p16", &opt);
    CHECK(sim != NULL, "csim_new(nor-m25p16): %s", sim ? "ok" : csim_error());
    if (!sim)
        return check_done("test_cxx");

    cairn_config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.dev = csim_dev(sim);
    std::vector<uint64_t> ctx((cairn_context_size() + 7) / 8);
    cairn *fs = reinterpret_cast<cairn *>(&ctx[0]);

    const std::vector<unsigned char> data = pattern(5000);
    const int32_t len = static_cast<int32_t>(data.size());
    int rc = cairn_format(fs, &cfg);
    CHECK(rc == 0, "format: %d", rc);
    rc = cairn_mount(fs, &cfg);
    CHECK(rc == 0, "mount: %d", rc);
    int fd = cairn_open(fs, "/cxx.bin", CAIRN_O_WRONLY | CAIRN_O_CREAT);
    CHECK(fd >= 0, "open /cxx.bin for writing: %d", fd);
    int32_t n = cairn_write(fs, fd, &data[0], len);
    CHECK(n == len, "write %ld bytes: %ld", static_cast<long>(len), static_cast<long>(n));
    rc = cairn_close(fs, fd);
    CHECK(rc == 0, "close: %d", rc);
    rc = cairn_unmount(fs);
    CHECK(rc == 0, "unmount: %d", rc);

    rc = cairn_mount(fs, &cfg);
    CHECK(rc == 0, "remount: %d", rc);
    cairn_info info;
    std::memset(&info, 0, sizeof info);
    rc = cairn_stat(fs, "/cxx.bin", &info);
    CHECK(rc == 0 && info.type == CAIRN_TYPE_FILE && info.size == len,
          "stat after remount: rc %d, type %u, size %ld", rc, static_cast<unsigned>(info.type),
          static_cast<long>(info.size));
    std::vector<unsigned char> back(data.size() + 16);
    fd = cairn_open(fs, "/cxx.bin", CAIRN_O_RDONLY);
    n = fd >= 0 ? cairn_read(fs, fd, &back[0], static_cast<int32_t>(back.size())) : fd;
    CHECK(n == len && std::memcmp(&back[0], &data[0], data.size()) == 0,
          "read back after remount: %ld bytes, content %s", static_cast<long>(n),
          n == len && std::memcmp(&back[0], &data[0], data.size()) == 0 ? "equal" : "differs");
    if (fd >= 0)
        cairn_close(fs, fd);
    cairn_check_report rep;
    std::memset(&rep, 0, sizeof rep);
    rc = cairn_check(fs, &rep, NULL, NULL);
    CHECK(rc == 0 && rep.errors == 0 && rep.files == 1,
          "cairn_check: rc %d, %lu errors, %lu files", rc, static_cast<unsigned long>(rep.errors),
          static_cast<unsigned long>(rep.files));
    rc = cairn_unmount(fs);
    CHECK(rc == 0, "unmount: %d", rc);
    csim_free(sim);
    return check_done("test_cxx");
}
