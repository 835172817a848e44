import { useEffect } from 'react';
import { AdapterPanel } from './components/AdapterPanel';
import { TrainPanel } from './components/TrainPanel';
import { probeAdapter } from './controller';
import { useStore } from './store';

export function App() {
  const adapterStatus = useStore((s) => s.adapter.status);
  useEffect(() => {
    void probeAdapter();
  }, []);
  return (
    <main>
      <header>
        <h1>NSA Playground</h1>
        <p className="muted">Train small sparse-attention language models on your GPU with WebGPU.</p>
      </header>
      <AdapterPanel />
      {adapterStatus === 'ready' && <TrainPanel />}
    </main>
  );
}
