// Locust's web UI from its locust-ui library, every stock tab as it comes, plus the locustfile's
// extended tabs (the Pods table), liveness-lab's Live tab (LiveTab.jsx) and Workshop tab (WorkshopTab.jsx),
// and above it all the workshop's current step while Locust shows its start form (no tab yet).
import { createRoot } from 'react-dom/client';
import LocustUi from 'locust-ui';

import './postOnlyRequests.js';
import LiveTab from './LiveTab.jsx';
import WorkshopTab, { WorkshopBanner } from './WorkshopTab.jsx';

const args = window.templateArgs || {};

createRoot(document.getElementById('root')).render(
  <>
    <WorkshopBanner />
    <LocustUi
      extendedTabs={[
        ...(args.extended_tabs || []),
        { title: 'Live', key: 'live', component: LiveTab },
        { title: 'Workshop', key: 'workshop', component: WorkshopTab },
      ]}
      extendedTables={args.extended_tables || []}
      extendedReports={args.extended_csv_files || []}
    />
  </>,
);
