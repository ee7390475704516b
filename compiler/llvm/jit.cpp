// The process-wide ORC session that links kernel objects.
//
// One LLJIT (JITLink on x86-64 ELF), created on first use and never destroyed: kernels may
// be held in static objects whose destructors run after any other static's, and unloading
// into a destroyed session would crash. Its ProcessSymbols dylib resolves calls into the
// process (libm), with generators for libm.so.6 and libmvec.so.1 added explicitly, loaded
// permanently into the process, so kernels resolve them even when the executable itself
// does not link them (codegen.cpp emits a libmvec call only when this process has it).
//
// Unloading: every load_kernel creates a fresh JITDylib ("lsjit.kernel.N", N a counter)
// whose link order is LLJIT's default (ProcessSymbols), adds the object to it and looks the
// symbol up there. The returned LoadedKernel owns that JITDylib; its destructor removes it
// from the session (ExecutionSession::removeJITDylib), which releases the code and data
// memory and the object's registered EH frames. Because each kernel has its own dylib,
// the same symbol can be loaded any number of times, and two kernels with the same symbol
// never clash. A failed load removes its dylib before throwing.
//
// All session calls are serialized by one mutex: loading takes well under a millisecond
// and happens once per kernel, so contention is not a concern.
#include "lsjit/compiler/llvm/jit.h"

#include <mutex>
#include <string>
#include <utility>

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>

#include "lsjit/common/error.h"

namespace lsjit::compiler {
namespace {

[[noreturn]] void fail(const std::string& message) { throw Error("lsjit jit: " + message); }

std::string take_message(llvm::Error error) { return llvm::toString(std::move(error)); }

class Session {
 public:
  static Session& get() {
    // Leaked on purpose (see the file comment).
    static Session* session = new Session();
    return *session;
  }

  std::mutex mutex;

  llvm::orc::LLJIT& jit() {
    if (!jit_) {
      jit_ = create();
      // Link errors (an unresolved symbol) reach the session's error reporter, while the
      // lookup only fails with "failed to materialize": keep them for the exception.
      jit_->getExecutionSession().setErrorReporter([this](llvm::Error error) {
        if (!reported_.empty()) reported_ += "; ";
        reported_ += take_message(std::move(error));
      });
    }
    return *jit_;
  }
  uint64_t next_id() { return counter_++; }
  // Errors reported since the last call (callers hold `mutex`).
  std::string take_reported() { return std::exchange(reported_, {}); }

 private:
  static std::unique_ptr<llvm::orc::LLJIT> create() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto jit = llvm::orc::LLJITBuilder().create();
    if (!jit) fail("cannot create the ORC JIT: " + take_message(jit.takeError()));
    std::unique_ptr<llvm::orc::LLJIT> result = std::move(*jit);

    llvm::orc::JITDylibSP process = result->getProcessSymbolsJITDylib();
    if (!process) fail("the ORC JIT has no process-symbols dylib");
    const char prefix = result->getDataLayout().getGlobalPrefix();
    for (const char* library : {"libm.so.6", "libmvec.so.1"}) {
      // Permanently in the process (RTLD_GLOBAL), and searched explicitly.
      std::string ignored;
      llvm::sys::DynamicLibrary::LoadLibraryPermanently(library, &ignored);
      auto generator = llvm::orc::DynamicLibrarySearchGenerator::Load(library, prefix);
      if (generator)
        process->addGenerator(std::move(*generator));
      else
        llvm::consumeError(generator.takeError());  // absent: codegen does not call it
    }
    return result;
  }

  std::unique_ptr<llvm::orc::LLJIT> jit_;
  uint64_t counter_ = 0;
  std::string reported_;
};

class OrcKernel final : public LoadedKernel {
 public:
  OrcKernel(llvm::orc::JITDylib* dylib, KernelFn fn) : dylib_(dylib), fn_(fn) {}
  ~OrcKernel() override { remove(dylib_); }
  KernelFn function() const override { return fn_; }

  // Removes a kernel's dylib; errors cannot be reported from a destructor and only mean
  // the memory stays mapped, so they are dropped.
  static void remove(llvm::orc::JITDylib* dylib) {
    Session& session = Session::get();
    std::lock_guard<std::mutex> lock(session.mutex);
    llvm::consumeError(session.jit().getExecutionSession().removeJITDylib(*dylib));
  }

 private:
  llvm::orc::JITDylib* dylib_;
  KernelFn fn_;
};

}  // namespace

std::shared_ptr<LoadedKernel> load_kernel_orc(const std::string& object_code,
                                              const std::string& symbol) {
  Session& session = Session::get();
  llvm::orc::JITDylib* dylib = nullptr;
  llvm::orc::ExecutorAddr address;
  {
    std::lock_guard<std::mutex> lock(session.mutex);
    llvm::orc::LLJIT& jit = session.jit();
    auto created = jit.createJITDylib("lsjit.kernel." + std::to_string(session.next_id()));
    if (!created) fail("cannot create a JITDylib: " + take_message(created.takeError()));
    dylib = &*created;

    session.take_reported();
    auto abandon = [&](std::string message) {
      llvm::consumeError(jit.getExecutionSession().removeJITDylib(*dylib));
      const std::string reported = session.take_reported();
      if (!reported.empty()) message += " (" + reported + ")";
      fail(message);
    };
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(object_code, "lsjit." + symbol + ".o");
    if (llvm::Error error = jit.addObjectFile(*dylib, std::move(buffer)))
      abandon("cannot load the object code of kernel '" + symbol +
              "': " + take_message(std::move(error)));
    auto found = jit.lookup(*dylib, symbol);
    if (!found)
      abandon("cannot link kernel '" + symbol + "': " + take_message(found.takeError()));
    address = *found;
  }
  if (!address) {
    OrcKernel::remove(dylib);
    fail("kernel '" + symbol + "' has a null address");
  }
  return std::make_shared<OrcKernel>(dylib, address.toPtr<KernelFn>());
}

}  // namespace lsjit::compiler
