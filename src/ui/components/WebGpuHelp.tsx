// How to get WebGPU when the page found none: per browser, with Chrome on Linux spelled out.
export interface WebGpuHelpProps {
  secureContext: boolean;
  hasNavigatorGpu: boolean;
}

export function WebGpuHelp({ secureContext, hasNavigatorGpu }: WebGpuHelpProps) {
  return (
    <div className="webgpu-help" data-testid="webgpu-help">
      <p>
        <strong>How to enable WebGPU</strong>
      </p>
      <ul>
        {!secureContext && (
          <li data-testid="webgpu-help-secure">
            Open this page over <code>https://</code> or from <code>localhost</code>: browsers only offer WebGPU in a secure context, and
            this page is not one.
          </li>
        )}
        <li>
          <strong>Chrome or Edge 113+</strong> on Windows, macOS and ChromeOS: WebGPU is on by default. If it still fails, open{' '}
          <code>chrome://gpu</code> and look at the WebGPU line: the GPU or its driver may be blocklisted.
        </li>
        <li data-testid="webgpu-help-linux">
          <strong>Chrome on Linux</strong>: open <code>chrome://flags/#enable-unsafe-webgpu</code>, set it to Enabled and relaunch; if there
          is still no adapter, start Chrome from a terminal with <code>google-chrome --enable-unsafe-webgpu --enable-features=Vulkan</code>{' '}
          (a Vulkan driver for your GPU must be installed: <code>vulkaninfo</code> lists it). Check <code>chrome://gpu</code> afterwards.
        </li>
        <li>
          <strong>Firefox</strong>: on by default from version 141 on Windows; elsewhere use Firefox Nightly or set{' '}
          <code>dom.webgpu.enabled</code> in <code>about:config</code>.
        </li>
        <li>
          <strong>Safari 26+</strong> on macOS, iOS and iPadOS: on by default.
        </li>
        <li>
          No GPU at all (a VM, a remote desktop): Chrome can run WebGPU in software with{' '}
          <code>--enable-unsafe-webgpu --enable-unsafe-swiftshader</code>. It works, slowly.
        </li>
      </ul>
      {secureContext && !hasNavigatorGpu && (
        <p className="muted">This browser has no WebGPU at all (navigator.gpu is missing): use one of the browsers above.</p>
      )}
    </div>
  );
}
