// Locust's web UI from its locust-ui library, every stock tab as it comes, plus the locustfile's
// extended tabs (the Pods table) and liveness-lab's Live tab (LiveTab.jsx).
import { createRoot } from 'react-dom/client';
import LocustUi from 'locust-ui';

import './postOnlyRequests.js';
import LiveTab from './LiveTab.jsx';

const args = window.templateArgs || {};

createRoot(document.getElementById('root')).render(
  <LocustUi
    extendedTabs={[...(args.extended_tabs || []), { title: 'Live', key: 'live', component: LiveTab }]}
    extendedTables={args.extended_tables || []}
    extendedReports={args.extended_csv_files || []}
  />,
);
