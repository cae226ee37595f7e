import { createRoot } from 'react-dom/client';
import { App } from './App';
import { takeTokenFromFragment } from './api';
import './styles.css';

takeTokenFromFragment();
createRoot(document.getElementById('root')!).render(<App />);
